//! End-to-end through the real app: WebKitWebDriver drives the debug binary (under Xvfb, in a D-Bus session with an
//! unlocked gnome-keyring — `cargo xtask e2e` sets that up) against a devserver started here on the loopback.
//! Skipped unless `HERMES_E2E=1`. Screenshots go to `target/e2e-screens/`.

mod wd;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wd::Driver;
use wd::app::*;

/// The composer's text is a draft in the store: it is there again after the app ends (its WebDriver session
/// closed, its processes killed) and starts again.
#[test]
fn e2e_draft_survives_a_restart() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let (data, _) = data_with_profile("Draft agent", &agent.url(), TOKEN);
    let draft = "a thought I had not finished — with a second line\nand unicode ✓";
    {
        let app = launch(data.path());
        type_text(&app.s, draft);
        // saved shortly after the typing stops (the debounce)
        let store = hermes_store::Store::open_in(data.path()).unwrap();
        until("the draft saved", || {
            store
                .conversations(&store.profiles().unwrap()[0].id)
                .unwrap()
                .iter()
                .any(|c| store.draft_get(&c.id).unwrap().as_deref() == Some(draft))
        });
        drop(app);
    }
    let app = launch(data.path());
    app.s.wait(
        "the draft back in the composer",
        20,
        &format!("const t=document.getElementById('composer-input'); return !!t && t.value === {}", json!(draft)),
    );
}

/// The app on two agents ([`two_agents`]), the first one open.
fn open_two_agents(agent: &Agent) -> (tempfile::TempDir, Driver, wd::Session) {
    open_two_agents_env(agent, &[])
}

fn open_two_agents_env(agent: &Agent, env: &[(&str, &str)]) -> (tempfile::TempDir, Driver, wd::Session) {
    let data = two_agents(agent);
    let driver = Driver::start_env(data.path(), env);
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait("composer", 20, "return !!document.getElementById('composer-input')");
    s.wait(
        "the first agent open",
        10,
        &format!("const b = (() => {{ {FIRST_ROW} }})(); return b.getAttribute('aria-current') === 'page'"),
    );
    (data, driver, s)
}

/// Settings → Voice, opened with Ctrl+, as a user would.
fn open_voice_settings(s: &wd::Session) {
    s.press(&[wd::keys::CONTROL], &[","]);
    s.wait("settings", 10, "return !!document.querySelector('[role=tab]')");
    s.exec("[...document.querySelectorAll('[role=tab]')].find(b => b.innerText.includes('Voice')).click()", json!([]));
}

/// A reply that arrives in a conversation not on screen is counted in the sidebar until that conversation is opened.
#[test]
fn e2e_unread_badge() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let (_data, driver, s) = open_two_agents(&agent);
    s.wait("no banner", 20, "return !document.querySelector('.banner')");
    let (first, second) = (FIRST_ROW, SECOND_ROW);
    // send to the first agent, and open the second before its reply can arrive
    type_text(&s, "count me as unread");
    s.exec(
        &format!("document.querySelector('.composer button.send').click(); (() => {{ {second} }})().click();"),
        json!([]),
    );
    s.wait(
        "the first agent's row counts the reply",
        15,
        &format!("const b = (() => {{ {first} }})(); const n = b.querySelector('.badge [aria-hidden]'); return !!n && n.textContent.trim() === '1'"),
    );
    s.screenshot(&wd::screens().join("13-unread.png"));
    s.exec(&format!("(() => {{ {first} }})().click()"), json!([]));
    body_has(&s, "You said: count me as unread", 10);
    // the reply that came while away is under a "New messages" line
    s.wait(
        "the new-messages line above the reply",
        5,
        "const o = [...document.querySelectorAll('.new-line, .row')]; const i = o.findIndex(e => e.classList.contains('new-line'));
         return i >= 0 && !!o[i + 1] && o[i + 1].innerText.includes('You said: count me as unread')",
    );
    s.screenshot(&wd::screens().join("13a-new-messages.png"));
    s.wait("read", 5, &format!("return !(() => {{ {first} }})().querySelector('.badge')"));

    // a draft left in the first agent's composer shows under its row once Alt+Down opened the second agent
    type_text(&s, "half a thought");
    s.exec(
        "window.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown', altKey: true, bubbles: true}))",
        json!([]),
    );
    s.wait(
        "the second agent open, the first one's draft under its row",
        10,
        &format!(
            "const a = (() => {{ {first} }})(); const b = (() => {{ {second} }})();
             return b.getAttribute('aria-current') === 'page' && a.innerText.includes('Draft: half a thought')"
        ),
    );
    s.screenshot(&wd::screens().join("13b-draft.png"));
    drop(s);
    drop(driver);
}

/// Each agent its own look: chosen for the first agent in Settings → Voice, the bundled avatar wears it while that agent
/// is on screen, the default one for the second agent, and the first one's again on the way back.
#[test]
fn e2e_each_agent_its_avatar_look() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let (_data, driver, s) = open_two_agents(&agent);
    let (first, second) = (FIRST_ROW, SECOND_ROW);
    let look = |want: &str| format!("{AVATAR_ROOT} return !!root && root.dataset.look === '{want}'");
    s.wait("the default look", 15, &look("lilac"));
    open_voice_settings(&s);
    s.wait("the agent's look", 10, "return !!document.querySelector('[data-testid=agent-look]')");
    s.exec(
        "const l = document.querySelector('[data-testid=agent-look]'); l.value = 'mint'; l.dispatchEvent(new Event('change', {bubbles: true}))",
        json!([]),
    );
    s.screenshot(&wd::screens().join("28-settings-agent-voice.png"));
    s.press(&[], &[wd::keys::ESCAPE]);
    s.wait("settings closed", 10, "return !document.querySelector('[role=tab]')");
    s.wait("the first agent's look", 10, &look("mint"));
    s.screenshot(&wd::screens().join("28b-agent-look-mint.png"));
    s.exec(&format!("(() => {{ {second} }})().click()"), json!([]));
    s.wait("the second agent's (default) look", 10, &look("lilac"));
    s.exec(&format!("(() => {{ {first} }})().click()"), json!([]));
    s.wait("the first agent's look again", 10, &look("mint"));
    drop(s);
    drop(driver);
}

/// A picture the user picks becomes the first agent's avatar — cropped to its centre, kept in the data
/// folder, handed to the bundled page as a `data:` URL — and moves with the avatar's states; the second agent keeps
/// the drawn one; "Use the drawn avatar" takes it back.
#[test]
fn e2e_an_agent_wears_the_users_picture() {
    if !enabled() {
        return;
    }
    let pics = tempfile::tempdir().unwrap();
    // a wide photo: red, green and blue thirds (the centred square keeps green in the middle)
    let photo = pics.path().join("me on holiday.png");
    image::RgbImage::from_fn(1800, 900, |x, _| match x / 600 {
        0 => image::Rgb([220, 40, 40]),
        1 => image::Rgb([40, 200, 80]),
        _ => image::Rgb([40, 60, 220]),
    })
    .save(&photo)
    .unwrap();
    let agent = Agent::start(None);
    let (data, driver, s) = open_two_agents_env(&agent, &[("HERMES_E2E_PICK_FILES", photo.to_str().unwrap())]);
    let (first, second) = (FIRST_ROW, SECOND_ROW);
    let pictured = format!("{AVATAR_ROOT} return !!root && root.dataset.image === '1'");
    let drawn = format!("{AVATAR_ROOT} return !!root && !root.dataset.image");
    s.wait("the drawn avatar", 15, &drawn);
    open_voice_settings(&s);
    s.wait("the picture button", 10, "return !!document.querySelector('[data-testid=agent-picture] button')");
    s.exec("document.querySelector('[data-testid=agent-picture] button').click()", json!([]));
    s.wait(
        "the picture's preview",
        15,
        "const i = document.querySelector('[data-testid=agent-picture] .thumb img');          return !!i && i.complete && i.naturalWidth === 512",
    );
    s.screenshot(&wd::screens().join("29-settings-agent-picture.png"));
    s.press(&[], &[wd::keys::ESCAPE]);
    s.wait("the first agent wears the picture", 10, &pictured);
    let href = s.exec(
        &format!("{AVATAR_ROOT} const i = d.querySelector('.picture-img'); return i ? i.getAttribute('href') : ''"),
        json!([]),
    );
    assert!(
        href.as_str().unwrap_or("").starts_with("data:image/jpeg;base64,"),
        "{}",
        &href.to_string()[..80.min(href.to_string().len())]
    );
    // kept in the data folder, as the centred square at 512 px
    let kept = std::fs::read_dir(data.path().join("avatars")).unwrap().flatten().map(|e| e.path()).collect::<Vec<_>>();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let img = image::open(&kept[0]).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (512, 512));
    let mid = img.get_pixel(256, 256).0;
    assert!(mid[1] > 150 && mid[0] < 100, "green in the middle of the crop: {mid:?}");
    // it speaks: the picture moves with the voice
    s.exec(
        &format!("{AVATAR_ROOT} f.contentWindow.hermesAvatar.setState('speaking');                   f.contentWindow.hermesAvatar.setSpeechLevel(0.9)"),
        json!([]),
    );
    s.wait(
        "the picture talks",
        10,
        &format!("{AVATAR_ROOT} f.contentWindow.hermesAvatar.setSpeechLevel(0.9);                   const t = d.querySelector('.picture-talk'); return !!t && /scale/.test(t.getAttribute('style') || '')"),
    );
    s.screenshot(&wd::screens().join("29b-avatar-picture-speaking.png"));
    s.exec(&format!("{AVATAR_ROOT} f.contentWindow.hermesAvatar.setState('idle')"), json!([]));
    // the other agent keeps the drawn avatar; back to the first, its picture again
    s.exec(&format!("(() => {{ {second} }})().click()"), json!([]));
    s.wait("the second agent's drawn avatar", 10, &drawn);
    s.exec(&format!("(() => {{ {first} }})().click()"), json!([]));
    s.wait("the first agent's picture again", 10, &pictured);
    // and back to the drawn avatar
    open_voice_settings(&s);
    s.wait(
        "the remove button",
        10,
        "return document.querySelectorAll('[data-testid=agent-picture] button').length === 2",
    );
    s.exec("document.querySelectorAll('[data-testid=agent-picture] button')[1].click()", json!([]));
    s.wait("no preview", 10, "return !document.querySelector('[data-testid=agent-picture] .thumb img')");
    s.press(&[], &[wd::keys::ESCAPE]);
    s.wait("the drawn avatar again", 10, &drawn);
    assert_eq!(std::fs::read_dir(data.path().join("avatars")).unwrap().count(), 0, "the picture is forgotten");
    drop(s);
    drop(driver);
}

/// Unread counts are kept by the store: a reply counted unread is still counted after a restart, its "New messages"
/// line comes back when it is opened, and once read it stays read after the next restart.
#[test]
fn e2e_unread_survives_a_restart() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let data = two_agents(&agent);
    let (first, second) = (FIRST_ROW, SECOND_ROW);
    let badge_is = |n: &str| {
        format!(
            "const b = (() => {{ {second} }})(); const n = b && b.querySelector('.badge [aria-hidden]'); return !!n && n.textContent.trim() === {}",
            json!(n)
        )
    };
    let store = hermes_store::Store::open_in(data.path()).unwrap();
    let unread_of_second = || {
        let p = store.profiles().unwrap().into_iter().find(|p| p.name == "Second agent").unwrap();
        store.conversations(&p.id).unwrap().iter().map(|c| store.unread_count(&c.id).unwrap()).sum::<u32>()
    };
    let wait_store = |want: u32, what: &str| until(what, || unread_of_second() == want);
    {
        let app = launch(data.path());
        let s = &app.s;
        s.wait("no banner", 20, "return !document.querySelector('.banner')");
        // send to the second agent, and go back to the first before its reply can arrive
        s.exec(&format!("(() => {{ {second} }})().click()"), json!([]));
        s.wait(
            "the second agent open",
            10,
            &format!("return (() => {{ {second} }})().getAttribute('aria-current') === 'page'"),
        );
        s.wait("connected", 20, "return !document.querySelector('.banner')");
        type_text(s, "count me after a restart");
        s.exec(
            &format!("document.querySelector('.composer button.send').click(); (() => {{ {first} }})().click();"),
            json!([]),
        );
        s.wait("the second agent's row counts the reply", 15, &badge_is("1"));
        wait_store(1, "the reply counted unread");
        drop(app);
    }
    {
        let app = launch(data.path());
        let s = &app.s;
        s.wait("the count kept across the restart", 10, &badge_is("1"));
        s.screenshot(&wd::screens().join("13c-unread-after-restart.png"));
        s.exec(&format!("(() => {{ {second} }})().click()"), json!([]));
        body_has(s, "You said: count me after a restart", 10);
        s.wait(
            "the new-messages line above the reply",
            5,
            "const o = [...document.querySelectorAll('.new-line, .row')]; const i = o.findIndex(e => e.classList.contains('new-line'));
             return i >= 0 && !!o[i + 1] && o[i + 1].innerText.includes('You said: count me after a restart')",
        );
        s.wait("read", 5, &format!("return !(() => {{ {second} }})().querySelector('.badge')"));
        wait_store(0, "opened, so read");
        drop(app);
    }
    let app = launch(data.path());
    let s = &app.s;
    s.wait("both agents listed", 10, &format!("return !!(() => {{ {second} }})()"));
    assert_eq!(s.exec(&format!("return !!(() => {{ {second} }})().querySelector('.badge')"), json!([])), json!(false));
}

/// Cards are kept with the conversation: after a restart an approval card is still in the history, still answerable,
/// and the agent's outcome is kept for the next restart.
#[test]
fn e2e_card_survives_a_restart() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let (data, _) = data_with_profile("Card agent", &agent.url(), TOKEN);
    let allow = "[...document.querySelectorAll('article.card button')].find(b => b.innerText.includes('Allow once'))";
    {
        let app = launch(data.path());
        app.s.wait("connected", 20, "return !document.querySelector('.banner')");
        type_and_send(&app.s, "/approve");
        app.s.wait("card", 15, &format!("return !!{allow}"));
        // kept by the shell as it arrived
        let store = hermes_store::Store::open_in(data.path()).unwrap();
        let conv = store.conversations(&store.profiles().unwrap()[0].id).unwrap().remove(0);
        until("the card stored", || !store.cards_between(&conv.id, None, None).unwrap().is_empty());
    }
    {
        let app = launch(data.path());
        let s = &app.s;
        s.wait(
            "the waiting card back, with its command and buttons",
            15,
            &format!(
                "const b = {allow}; return !!b && !b.disabled &&
                 document.querySelector('article.card pre.command')?.innerText.includes('rm -rf ./build')"
            ),
        );
        s.wait("connected", 20, "return !document.querySelector('.banner')");
        // the avatar asks it again in its bubble (the line came before the avatar's page had loaded)
        s.wait(
            "the waiting card's question in the avatar's bubble",
            10,
            "const d = document.querySelector('#avatar-pane iframe')?.contentDocument;
             return !!d && (d.querySelector('.bubble-text')?.textContent ?? '').includes('run a command')",
        );
        s.screenshot(&wd::screens().join("03b-card-after-restart.png"));
        s.exec(&format!("{allow}.click()"), json!([]));
        s.wait("answered", 15, "return !!document.querySelector('article.card .outcome')");
    }
    let app = launch(data.path());
    app.s.wait(
        "the outcome kept",
        15,
        "const o = document.querySelector('article.card .outcome'); return !!o && o.innerText.includes('Allow once')",
    );
}

#[test]
fn e2e_access_denied() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let (data, _) = data_with_profile("Wrong token", &agent.url(), "not-the-right-token-0000000000");
    let driver = Driver::start(data.path());
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait("access denied banner", 30, "return !!document.querySelector('.banner.danger')");
    body_has(&s, "No access to the agent", 5);
    s.screenshot(&wd::screens().join("09-access-denied.png"));
    // The accessibility check itself: it finds text too faint to read, and judges a screen as it rests — text that
    // fades in to full contrast is not failed for the colours it has half-way (a banner caught mid-animation did).
    let plant = |css: &str| {
        s.exec(
            "const p = document.createElement('p'); p.id = 'axe-plant'; p.textContent = 'Planted text';
             p.style.cssText = 'position:fixed;top:40%;left:40%;padding:8px;background:#ffffff;font-size:14px;' + arguments[0];
             document.getElementById('axe-plant')?.remove(); document.body.append(p); return true",
            json!([css]),
        )
    };
    plant("color:#c8c8c8");
    let faint = s.axe_violations();
    assert!(faint.iter().any(|v| v.starts_with("color-contrast") && v.contains("#axe-plant")), "{faint:?}");
    s.exec(
        "const st = document.createElement('style');
         st.textContent = '@keyframes axe-fade { from { opacity: 0.15 } to { opacity: 1 } }';
         document.head.append(st); return true",
        json!([]),
    );
    plant("color:#000000;animation:axe-fade 1200ms linear");
    assert_eq!(s.axe_violations(), Vec::<String>::new(), "text fading in to full contrast failed mid-way");
    s.exec("document.getElementById('axe-plant').remove(); return true", json!([]));
    assert!(!wd::app_log(data.path()).contains("not-the-right-token-0000000000"));
    drop(s);
    drop(driver);
    assert_token_nowhere(data.path(), "not-the-right-token-0000000000");
}

#[test]
fn e2e_first_run_demo() {
    if !enabled() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let driver = Driver::start(data.path());
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    // (after the session is up: the snapshot was made before it, so 7 s from here is at least 7 s of its age even
    // when a loaded machine takes seconds to start the app)
    let launched = std::time::Instant::now();
    s.wait("composer", 20, "return !!document.getElementById('composer-input')");
    body_has(&s, "Demo agent", 10);
    // The first profiles, conversations and history came with the window (src-tauri/src/boot.rs), not over IPC.
    let boot =
        s.exec("return [performance.getEntriesByName('hermes:boot').length, typeof window.__HERMES_BOOT__]", json!([]));
    assert_eq!(boot, json!([1, "undefined"]), "the start-up snapshot was not used (or was left on the page)");
    // WebKitGTK resolves each family of a stack through fontconfig (~150 ms of the first render with the
    // cross-platform stacks): on Linux the page uses the desktop's fonts (app.css, `data-platform`), and leaves
    // `system-ui` out where fontconfig has not got the font it names (src-tauri/src/fonts.rs: each font was looked up
    // twice there). What this machine's fontconfig says decides which.
    let fonts = s.exec(
        "const cs = (sel) => getComputedStyle(document.querySelector(sel)).fontFamily;
         const root = document.documentElement;
         return [root.dataset.platform, cs('body'), cs('#composer-input'), root.dataset.uiFont ?? null]",
        json!([]),
    );
    let expected = if hermes_desktop::fonts::ui_font_missing() {
        json!(["linux", "sans-serif", "sans-serif", "missing"])
    } else {
        json!(["linux", "system-ui, sans-serif", "system-ui, sans-serif", null])
    };
    assert_eq!(fonts, expected, "font stacks: {fonts}");
    s.wait("connected", 20, "return !document.querySelector('.banner')");
    // Without a GPU (gpu.rs): GDK's GL is off, so the UI process never loads Mesa's GLX, and EGL (which WebKit needs:
    // its web process aborts without a display, and this page answered) has the driver loaded.
    if !hermes_desktop::gpu::has_render_node(std::path::Path::new("/dev/dri")) {
        let app = wd::descendants(driver.pid())
            .into_iter()
            .find(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "hermes-desktop"))
            .expect("the app's process");
        let maps = std::fs::read_to_string(format!("/proc/{app}/maps")).unwrap_or_default();
        assert!(!maps.contains("libGLX_mesa"), "GDK probed GLX in the UI process");
        assert!(maps.contains("libEGL_mesa"), "no EGL driver in the UI process");
    }
    type_and_send(&s, "hi demo");
    body_has(&s, "You said: hi demo", 20);
    s.screenshot(&wd::screens().join("00-first-run-demo.png"));
    // A reload later in the session does not show the stale snapshot: it asks the shell, and sees the new messages.
    if let Some(wait) = Duration::from_secs(7).checked_sub(launched.elapsed()) {
        std::thread::sleep(wait);
    }
    // a first start on an empty conversation (never "interactive") still records its files for the next Show
    if cfg!(target_os = "linux") {
        assert!(!hermes_app::readahead::list(data.path()).is_empty(), "the start's files recorded by a first start");
    }
    s.exec("location.reload()", json!([]));
    s.wait(
        "reloaded",
        20,
        "return !!document.getElementById('composer-input') && document.body.innerText.includes('You said: hi demo')",
    );
    let boot = s.exec("return performance.getEntriesByName('hermes:boot').length", json!([]));
    assert_eq!(boot, json!(0), "a reload 7 s after launch used the start-up snapshot");
}

/// A `hermes://connect` link that launches the app prefills a new profile (URL and name only): a token in the link,
/// credentials in its URL and markup in its name never reach the form, the page's scripts, the log or the disk.
#[test]
fn e2e_deep_link_prefills_a_profile() {
    if !enabled() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let secret = "deeplink-secret-7d1e9a0b3c5f42";
    let hostile = "<img src=x onerror=\"window.__xss=1\">Lab <b>agent</b>";
    let target = format!("wss://me:{secret}@agent.example.com:8443/ws?token={secret}#{secret}");
    let link = url::Url::parse_with_params(
        "hermes://connect",
        &[("url", target.as_str()), ("name", hostile), ("token", secret)],
    )
    .unwrap();
    let driver = Driver::start(data.path());
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[link.as_str()]);
    s.wait("prefilled form", 30, "const u = document.getElementById('profile-url'); return !!u && u.value !== ''");
    let values = s.exec("return [...document.querySelectorAll('.dialog input')].map((i) => i.value)", json!([]));
    let values: Vec<String> = serde_json::from_value(values).unwrap();
    assert!(
        values.contains(&"wss://agent.example.com:8443/ws".to_string()),
        "URL without credentials/query: {values:?}"
    );
    assert!(values.contains(&hostile.to_string()), "the name is shown as typed text: {values:?}");
    assert!(values.iter().all(|v| !v.contains(secret)), "no secret in any field: {values:?}");
    let note = s.exec("return document.querySelector('.dialog .from-link').innerText", json!([]));
    assert_eq!(
        note.as_str().unwrap_or_default().trim(),
        "From a link: host agent.example.com:8443 — check before you add your token"
    );
    s.screenshot(&wd::screens().join("10-deep-link.png"));
    no_xss(&s);
    drop(s);
    drop(driver);
    let log = wd::app_log(data.path());
    assert!(log.contains("deep link"), "the link was logged (redacted)");
    assert!(!log.contains(secret), "the link's secret reached the log");
    assert_token_nowhere(data.path(), secret);
}

/// Without a usable Secret Service (no D-Bus session bus for the app): Settings says so, "remember for this session
/// only" is offered and works — the app connects with the token kept in memory, and nothing reaches the disk.
#[test]
fn e2e_no_keychain_session_only_token() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let data = tempfile::tempdir().unwrap();
    let driver =
        Driver::start_env(data.path(), &[("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/hermes-no-bus")]);
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait("composer (demo agent)", 30, "return !!document.getElementById('composer-input')");
    s.exec(
        "[...document.querySelectorAll('.sidebar .foot button')].find((b) => !b.classList.contains('icon-btn')).click()",
        json!([]),
    );
    s.wait("new profile form", 10, "return !!document.getElementById('token-input')");
    s.wait("no-keychain note", 10, "return !!document.querySelector('.note.warn')");
    let note = s.exec("return document.querySelector('.note.warn').innerText", json!([]));
    assert!(note.as_str().unwrap_or("").contains("No system keychain"), "clear message: {note}");
    assert!(note.as_str().unwrap_or("").contains("restart Hermes"), "what to do about it: {note}");
    assert!(
        !note.as_str().unwrap_or("").to_lowercase().contains("no system keychain is available here"),
        "the OS store's reason, not the sentence again: {note}"
    );
    assert_eq!(
        s.exec("return document.querySelector('.note.warn input[type=checkbox]').checked", json!([])),
        json!(true),
        "session only is the default without a keychain"
    );
    s.exec(
        "const set = (el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); };
         const f = document.querySelector('.dialog form');
         set(f.querySelector('input.input'), 'Session agent');
         set(document.getElementById('profile-url'), arguments[0]);
         set(document.getElementById('token-input'), arguments[1]);",
        json!([agent.url(), TOKEN]),
    );
    s.screenshot(&wd::screens().join("11-no-keychain.png"));
    s.exec("document.querySelector('.dialog form').requestSubmit()", json!([]));
    s.wait(
        "saved",
        15,
        "return [...document.querySelectorAll('.dialog h3')].some((h) => h.innerText.includes('Session agent'))",
    );
    let status = s.exec("return document.querySelector('.dialog .token-status').innerText", json!([]));
    assert!(status.as_str().unwrap_or("").contains("this session"), "the form says where the token is: {status}");
    let t = Instant::now();
    while agent.s().ready_count() == 0 {
        assert!(t.elapsed() < Duration::from_secs(20), "the app never connected with the session-only token");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.exec("document.querySelector('.dialog button.icon-btn').click()", json!([]));
    s.exec(
        "document.querySelector('.sidebar section.profile[aria-label=\"Session agent\"] .conv-btn').click()",
        json!([]),
    );
    s.wait("connected", 20, "return document.querySelector('.chat h1')?.innerText === 'Session agent' && !document.querySelector('.banner')");
    type_and_send(&s, "remember me");
    body_has(&s, "You said: remember me", 20);
    drop(s);
    drop(driver);
    assert!(!wd::app_log(data.path()).contains(TOKEN));
    assert_token_nowhere(data.path(), TOKEN);
}

/// Files through the app's own dialogs (answered through `HERMES_E2E_PICK_FILES` / `HERMES_E2E_SAVE_DIR`, as
/// WebDriver cannot drive GTK's native dialogs): the attach button uploads a 15 MiB file (5 parts) to a slow agent
/// (`Config::upload_delay`, 1 s a part: WebKit under Xvfb on a busy machine can go 2 s without painting) and it
/// arrives whole; "Save as…" on a received document writes an exact copy where the
/// save dialog said. The progress bar moves while it goes (the engine reports each part as it is written), and a
/// second upload of the same file is cancelled from its bar: "Transfer cancelled." in place, the agent never
/// answers it.
#[test]
fn e2e_attach_upload_and_save_as() {
    if !enabled() {
        return;
    }
    let agent = Agent::start_with(None, true);
    let (data, _) = data_with_profile("Files agent", &agent.url(), TOKEN);
    let files = tempfile::tempdir().unwrap();
    let big = files.path().join("big-upload.bin");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..15 * 1024 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&big, &bytes).unwrap();
    let save_dir = files.path().join("saved");
    std::fs::create_dir_all(&save_dir).unwrap();
    let driver = Driver::start_env(
        data.path(),
        &[("HERMES_E2E_PICK_FILES", big.to_str().unwrap()), ("HERMES_E2E_SAVE_DIR", save_dir.to_str().unwrap())],
    );
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait("connected", 30, "return !!document.getElementById('composer-input') && !document.querySelector('.banner')");

    s.exec(
        "window.__bar = 0;
         new MutationObserver(() => { const p = document.querySelector('.bubble [role=progressbar]'); if (p) window.__bar = Math.max(window.__bar, 1 + Number(p.getAttribute('aria-valuenow'))); })
           .observe(document.body, {subtree: true, childList: true, attributes: true});
         document.querySelector('.composer .attach').click()",
        json!([]),
    );
    s.wait("file staged", 15, "return document.querySelector('.composer').innerText.includes('big-upload.bin')");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
    body_has(&s, &format!("Got big-upload.bin ({} bytes)", bytes.len()), 90);
    let bar = s.exec("return window.__bar", json!([])).as_f64().unwrap_or(0.0);
    eprintln!("upload progress bar: highest % + 1 = {bar}");
    assert!(bar > 0.0, "an upload progress bar was shown while the file went out");
    s.screenshot(&wd::screens().join("12-upload-done.png"));

    // the same file again, cancelled from its progress bar
    s.exec("document.querySelector('.composer .attach').click()", json!([]));
    s.wait("file staged again", 15, "return document.querySelector('.composer').innerText.includes('big-upload.bin')");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
    s.wait("bar", 15, "return !!document.querySelector('.bubble [role=progressbar]')");
    s.screenshot(&wd::screens().join("12b-upload-progress.png"));
    s.exec("document.querySelector('.bubble .progress button').click()", json!([]));
    body_has(&s, "Transfer cancelled.", 10);
    s.wait("bar gone", 10, "return !document.querySelector('.bubble [role=progressbar]')");
    std::thread::sleep(Duration::from_secs(3));
    let answers = s.exec("return [...document.querySelectorAll('.bubble')].filter((b) => b.innerText.includes('Got big-upload.bin')).length", json!([]));
    assert_eq!(answers, json!(1), "the agent answered only the first upload");
    s.screenshot(&wd::screens().join("12c-upload-cancelled.png"));

    type_and_send(&s, "/media");
    s.wait("document received", 30, "return document.body.innerText.includes('report.txt')");
    s.exec(
        "const card = [...document.querySelectorAll('.attachment')].find((a) => a.innerText.includes('report.txt'));
         card.querySelector('button[aria-label=\"Save as…\"]').click()",
        json!([]),
    );
    let saved = save_dir.join("report.txt");
    let t = Instant::now();
    while !saved.exists() {
        assert!(t.elapsed() < Duration::from_secs(10), "save as wrote nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(std::fs::read(&saved).unwrap(), hermes_devserver::assets::demo_document(), "an exact copy");
    drop(s);
    drop(driver);
    assert_token_nowhere(data.path(), TOKEN);
}

/// The main screens as a new user meets them, for looking at (target/e2e-screens/2x-*.png): the demo agent's chat
/// with a streamed reply and a card in dark theme, Settings tabs, and the chat in Chinese and Russian.
#[test]
fn e2e_screens_themes_and_languages() {
    if !enabled() {
        return;
    }
    let shots = wd::screens();
    let data = tempfile::tempdir().unwrap();
    let driver = Driver::start(data.path());
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait(
        "demo connected",
        30,
        "return !!document.getElementById('composer-input') && !document.querySelector('.banner')",
    );
    s.screenshot(&shots.join("20-welcome-light.png"));
    type_and_send(&s, "/stream");
    let last_line = hermes_devserver::assets::LONG_MARKDOWN.trim_end().lines().last().unwrap().trim().to_string();
    let probe = last_line.trim_start_matches(|c: char| !c.is_alphanumeric()).chars().take(20).collect::<String>();
    body_has(&s, &probe, 30);
    type_and_send(&s, "/clarify");
    s.wait("card", 15, "return !!document.querySelector('article.card')");
    let open_settings = |tab: &str| {
        s.exec("document.querySelector('.sidebar .foot .icon-btn').click()", json!([]));
        s.wait("settings", 10, "return !!document.querySelector('.dialog')");
        s.exec(&format!("document.getElementById('tab-{tab}').click()"), json!([]));
    };
    let close_settings = || {
        s.exec("document.querySelector('.dialog .icon-btn').click()", json!([]));
        s.wait("settings closed", 10, "return !document.querySelector('.dialog')");
    };
    open_settings("appearance");
    s.exec("document.querySelector('input[name=theme][value=dark]').click()", json!([]));
    s.wait("dark", 5, "return document.documentElement.dataset.theme === 'dark' || document.documentElement.classList.contains('dark')");
    s.screenshot(&shots.join("21-settings-appearance-dark.png"));
    s.exec("document.getElementById('tab-profiles').click()", json!([]));
    s.screenshot(&shots.join("22-settings-agents-dark.png"));
    close_settings();
    s.screenshot(&shots.join("23-chat-dark.png"));
    for (lang, shot) in [("zh", "24-chat-zh.png"), ("ru", "25-chat-ru.png")] {
        open_settings("appearance");
        s.exec(
            "const sel = document.querySelector('.dialog select'); sel.value = arguments[0]; sel.dispatchEvent(new Event('change', {bubbles: true}));",
            json!([lang]),
        );
        s.wait("language applied", 5, &format!("return document.documentElement.lang === '{lang}'"));
        s.screenshot(&shots.join(shot.replace("chat", "settings")));
        s.exec("document.getElementById('tab-storage').click()", json!([]));
        s.wait("storage tab", 10, "return !!document.getElementById('max-download')");
        s.screenshot(&shots.join(shot.replace("chat", "settings-storage")));
        close_settings();
        s.screenshot(&shots.join(shot));
    }
    // The saved language comes back with a new page: its catalogue, a chunk of its own (not in the page's script),
    // loads as the page starts.
    // (the old page marked: until the reload has replaced it, its composer is still there)
    s.exec("window.__beforeReload = true; location.reload()", json!([]));
    s.wait("reloaded", 20, "return !window.__beforeReload && !!document.getElementById('composer-input')");
    let first = s.exec(
        "return [document.documentElement.lang, document.getElementById('composer-input').placeholder]",
        json!([]),
    );
    assert_eq!(first[0], json!("ru"), "{first}");
    assert!(first[1].as_str().is_some_and(|p| p.starts_with("Сообщение")), "the composer after a reload: {first}");
    open_settings("appearance");
    s.exec(
        "const sel = document.querySelector('.dialog select'); sel.value = 'en'; sel.dispatchEvent(new Event('change', {bubbles: true}));
         document.querySelector('input[name=theme][value=light]').click();",
        json!([]),
    );
    s.wait("back to English", 5, "return document.documentElement.lang === 'en'");
    s.exec("document.getElementById('tab-about').click()", json!([]));
    s.screenshot(&shots.join("26-settings-about.png"));
    // Settings → Storage: the download limit is stored by the shell for the next connection.
    s.exec("document.getElementById('tab-storage').click()", json!([]));
    s.wait("storage tab", 10, "return !!document.getElementById('max-download')");
    s.exec(
        "const sel = document.getElementById('max-download'); sel.value = '100'; sel.dispatchEvent(new Event('change', {bubbles: true}));",
        json!([]),
    );
    s.wait("limit saved", 10, "return !!document.querySelector('.storage-settings .ok')");
    s.screenshot(&shots.join("27-settings-storage.png"));
    let stored: Value = serde_json::from_slice(&std::fs::read(data.path().join("app-settings.json")).unwrap()).unwrap();
    assert_eq!(stored["maxDownloadMb"], 100, "{stored}");
    close_settings();
}

#[allow(dead_code)]
fn unused(_: Value) {}

/// A child process ended when the test ends (pass or fail).
struct Reaped(std::process::Child);
impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The connections on this test's D-Bus session of the processes the driver started (the app, its WebKit helpers).
fn app_bus_names(driver: &Driver) -> Vec<String> {
    wd::bus_names_of(&wd::descendants(driver.pid()))
}

/// The tray menu as the desktop's tray host reads it (StatusNotifierItem + com.canonical.dbusmenu on the bus).
fn tray_menu(bus_name: &str) -> String {
    let o = std::process::Command::new("gdbus")
        .args(["call", "--session", "--dest", bus_name, "--object-path"])
        .arg("/org/ayatana/NotificationItem/tray_icon_tray_app_main_tray/Menu")
        .args(["--timeout", "2", "--method", "com.canonical.dbusmenu.GetLayout", "--", "0", "-1", "[]"])
        .stderr(std::process::Stdio::null())
        .output()
        .expect("gdbus");
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Notifications and the tray, through the real desktop services of this test's D-Bus session: a notification
/// daemon (Debian's `notification-daemon`) answers `Notify`, and `dbus-monitor` records every call. While the main
/// window is unfocused (the detached avatar window is focused with xdotool), a reply and an approval card each raise a
/// notification with the agent's name and generic text only — never the reply or the command; once the main window
/// has the focus again, a reply raises none. The tray item is on the bus with its menu: "Lab agent — connected",
/// "Show Hermes", "Quit".
#[test]
fn e2e_notifications_and_tray() {
    if !enabled() {
        return;
    }
    let logs = tempfile::tempdir().unwrap();
    let mon_log = logs.path().join("notify.log");
    let _daemon = Reaped(
        std::process::Command::new("/usr/lib/notification-daemon/notification-daemon")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("notification-daemon (apt install notification-daemon)"),
    );
    let _monitor = Reaped(
        std::process::Command::new("dbus-monitor")
            .arg("type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
            .stdout(std::fs::File::create(&mon_log).unwrap())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dbus-monitor"),
    );
    let notifies = || std::fs::read_to_string(&mon_log).unwrap_or_default();
    let count = || notifies().matches("member=Notify").count();

    let agent = Agent::start(None);
    let (data, _) = data_with_profile("Lab agent", &agent.url(), TOKEN);
    let driver = Driver::start(data.path());
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait("connected", 30, "return !!document.getElementById('composer-input') && !document.querySelector('.banner')");

    // the tray, as a tray host sees it
    let t = Instant::now();
    let mut menu = String::new();
    while !menu.contains("Lab agent — connected") && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(200));
        menu = app_bus_names(&driver).iter().map(|b| tray_menu(b)).collect();
    }
    for label in ["Lab agent — connected", "Show Hermes", "Quit"] {
        assert!(menu.contains(label), "tray menu has {label:?}: {menu}");
    }

    // away from the main window: the detached avatar window gets the focus
    s.exec("document.querySelector('[data-testid=avatar-detach]').click()", json!([]));
    s.wait("detached", 10, "return !document.querySelector('#avatar-pane iframe')");
    let focus = |name: &str| {
        let t = Instant::now();
        loop {
            let ok = std::process::Command::new("xdotool")
                .args(["search", "--name", name, "windowfocus", "--sync"])
                .status()
                .is_ok_and(|s| s.success());
            if ok || t.elapsed() > Duration::from_secs(10) {
                return ok;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    assert!(focus("^Hermes avatar$"), "the avatar window can be focused");
    s.wait("main window unfocused", 10, "return !document.hasFocus()");
    let before = count();
    type_and_send(&s, "secret plan okapi");
    body_has(&s, "secret plan okapi", 15);
    let t = Instant::now();
    while count() < before + 1 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    type_and_send(&s, "/approve");
    s.wait("card", 15, "return !!document.querySelector('article.card')");
    // the demo agent's approval card runs "rm -rf ./build && cargo build --release"
    s.wait(
        "the card's command",
        10,
        "return document.querySelector('article.card pre.command')?.innerText.includes('rm -rf ./build')",
    );
    let t = Instant::now();
    while !notifies().contains("The agent needs your approval") && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = notifies();
    assert!(log.contains("string \"Lab agent\""), "titled with the agent's name: {log}");
    assert!(log.contains("string \"New reply\""), "a reply while away: {log}");
    assert!(log.contains("string \"The agent needs your approval\""), "a card while away: {log}");
    assert!(!log.contains("okapi"), "no reply text in a notification: {log}");
    assert!(!log.contains("rm -rf") && !log.contains("cargo build"), "no command in a notification: {log}");

    // back in the main window: no more notifications
    assert!(focus("^Hermes$"), "the main window can be focused");
    s.wait("main window focused", 10, "return document.hasFocus()");
    let n = count();
    type_and_send(&s, "while you look");
    body_has(&s, "while you look", 15);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(count(), n, "no notification while the window has the focus: {}", notifies());
    eprintln!("notifications: {n} Notify calls while away, none while focused");
}

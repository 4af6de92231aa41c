// Dev harness for avatar.html: embeds it in same-origin iframes and drives window.hermesAvatar the way the app
// does. Serve the avatar/ folder over http (python3 -m http.server -b 127.0.0.1) and open dev/harness.html.
//   ?shot=1&w=400&h=500&state=thinking&theme=dark&look=mint&text=...&level=0.6&motion=reduce&mic=1&envelope=1
//   &picture=sample
// (look= is handed to the page as its own ?look=, the way an app would load it; the selector calls setLook()).
// A picture (setImage) is read from a file and downscaled to ≤ 512 px the way the app does; "sample picture" draws one.
'use strict';
(function () {
  var q = new URLSearchParams(location.search);
  var shot = q.get('shot') === '1';
  var themeParam = q.get('theme'); // dark | light | absent: follow the system
  var dark = themeParam ? themeParam === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches;
  var reduce = q.get('motion') === 'reduce';
  var look = q.get('look');
  if (look) document.querySelector('[data-action=look]').value = look;
  document.querySelector('[data-action=dark]').checked = dark;
  document.querySelector('[data-action=reduce]').checked = reduce;
  var frames = [];
  var timers = { mic: 0, env: 0, cycle: 0 };
  var LONG = 'Here is what I found. The backup job ran at 02:00 and finished in 14 minutes; 3 files were skipped ' +
    'because they were open. Disk usage on /srv is at 71 %, up from 64 % last week — mostly the new photo ' +
    'library. I can prune old snapshots older than 30 days, which would free about 120 GB. Shall I do that now, ' +
    'or wait until the weekend?';
  var HOSTILE = 'He said "hi" \\ \'quoted\' </script><img src=x onerror=window.__xss=1>\nnew line <b>bold?</b> 🪽✨';

  function src() {
    var p = [];
    if (themeParam) p.push('theme=' + (dark ? 'dark' : 'light'));
    if (reduce) p.push('motion=reduce');
    if (look) p.push('look=' + encodeURIComponent(look));
    return '../avatar.html?' + p.join('&');
  }

  function add(w, h, label) {
    var fig = document.createElement('figure');
    var f = document.createElement('iframe');
    f.width = String(w);
    f.height = String(h);
    f.src = src();
    f.title = 'avatar ' + label;
    var cap = document.createElement('figcaption');
    cap.textContent = label + ' (' + w + '×' + h + ')';
    fig.appendChild(f);
    fig.appendChild(cap);
    document.querySelector('.frames').appendChild(fig);
    frames.push(f);
    f.addEventListener('load', function () { initial(f); });
  }

  function each(fn) {
    frames.forEach(function (f) {
      var a = f.contentWindow && f.contentWindow.hermesAvatar;
      if (a) fn(a);
    });
  }

  // The app evaluates e.g. `window.hermesAvatar.setState(<JSON>)`; from a same-origin parent a direct call is the same.
  function setState(s) { each(function (a) { a.setState(s); }); }
  function speak(t) { each(function (a) { a.speak(t); }); }

  var picture = null; // the data: URL handed to setImage, also to frames that (re)load

  function setImage(url) {
    picture = url;
    each(function (a) { if (a.setImage) a.setImage(url); });
  }

  /* a stand-in for a photo: a sky, a sun, a hill — drawn, so the harness needs no image file */
  function samplePicture() {
    var c = document.createElement('canvas');
    c.width = c.height = 256;
    var g = c.getContext('2d');
    var sky = g.createLinearGradient(0, 0, 0, 256);
    sky.addColorStop(0, '#7cc4ff');
    sky.addColorStop(1, '#ffe1b8');
    g.fillStyle = sky;
    g.fillRect(0, 0, 256, 256);
    g.fillStyle = '#ffcf3f';
    g.beginPath(); g.arc(170, 90, 38, 0, Math.PI * 2); g.fill();
    g.fillStyle = '#3f9d5a';
    g.beginPath(); g.ellipse(90, 260, 200, 90, 0, 0, Math.PI * 2); g.fill();
    return c.toDataURL('image/png');
  }

  /* the user's file, downscaled to ≤ 512 px (a GIF is passed as it is, to keep its animation, if it is small) */
  function readPicture(file) {
    var r = new FileReader();
    r.onload = function () {
      var url = String(r.result);
      if (file.type === 'image/gif' && url.length < 3000000) { setImage(url); return; }
      var img = new Image();
      img.onload = function () {
        var k = Math.min(1, 512 / Math.max(img.naturalWidth, img.naturalHeight));
        var c = document.createElement('canvas');
        c.width = Math.max(1, Math.round(img.naturalWidth * k));
        c.height = Math.max(1, Math.round(img.naturalHeight * k));
        c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
        setImage(file.type === 'image/jpeg' ? c.toDataURL('image/jpeg', 0.9) : c.toDataURL('image/png'));
      };
      img.src = url;
    };
    r.readAsDataURL(file);
  }

  function mic(on) {
    clearInterval(timers.mic);
    if (!on) return;
    var t0 = performance.now();
    timers.mic = setInterval(function () {
      var t = (performance.now() - t0) / 1000;
      var lv = Math.max(0, Math.sin(t * 5.3) * 0.5 + Math.sin(t * 11.7) * 0.3 + 0.25);
      each(function (a) { a.setVolume(lv); });
    }, 50);
  }

  function envelope(on) {
    clearInterval(timers.env);
    if (!on) return;
    var t0 = performance.now();
    timers.env = setInterval(function () {
      var t = (performance.now() - t0) / 1000;
      var syll = Math.max(0, Math.sin(t * 17)) * (0.6 + 0.4 * Math.sin(t * 2.3));
      each(function (a) { a.setSpeechLevel(Math.max(0, syll)); });
    }, 40);
  }

  function initial(f) {
    var a = f.contentWindow.hermesAvatar;
    if (picture && a.setImage) a.setImage(picture);
    var st = q.get('state');
    if (st) a.setState(st);
    if (q.get('text') !== null) a.speak(q.get('text') === 'long' ? LONG : q.get('text') === 'hostile' ? HOSTILE : q.get('text'));
    if (q.get('level') !== null) a.setVolume(Number(q.get('level')));
    if (q.get('speech') !== null) a.setSpeechLevel(Number(q.get('speech')));
  }

  function cycle() {
    clearInterval(timers.cycle);
    var steps = [
      function () { mic(false); setState('idle'); },
      function () { setState('listening'); mic(true); },
      function () { mic(false); setState('thinking'); },
      function () { setState('tool'); },
      function () { setState('speaking'); speak('Sure! I moved the meeting to Thursday at 3 pm and told Alex.'); },
      function () { setState('waiting'); },
      function () { setState('error'); },
      function () { setState('idle'); },
    ];
    var i = 0;
    steps[0]();
    timers.cycle = setInterval(function () { i = (i + 1) % steps.length; steps[i](); }, 3500);
  }

  if (q.get('debug') === '1') {
    setTimeout(function () {
      var d = frames[0].contentDocument;
      var b = d.querySelector('.bubble');
      var cs = frames[0].contentWindow.getComputedStyle(b);
      var pre = document.createElement('pre');
      pre.textContent = 'opacity=' + cs.opacity + ' vis=' + cs.visibility + ' cls=' + d.getElementById('hermes-avatar').className +
        ' top=' + d.getElementById('hermes-avatar').style.getPropertyValue('--stage-top');
      document.body.appendChild(pre);
    }, Number(q.get('debug_at') || 1500));
  }
  if (q.get('picture') === 'sample') picture = samplePicture();
  document.body.classList.toggle('dark', dark);
  if (shot) {
    document.body.classList.add('shot');
    add(Number(q.get('w') || 400), Number(q.get('h') || 500), 'shot');
    if (q.get('mic') === '1') mic(true);
    if (q.get('envelope') === '1') envelope(true);
  } else {
    add(120, 120, 'tiny window');
    add(220, 220, 'small window');
    add(320, 560, 'side pane');
    add(480, 360, 'wide');
  }

  document.querySelector('.toolbar').addEventListener('click', function (e) {
    var b = e.target;
    if (b.dataset.state) { clearInterval(timers.cycle); setState(b.dataset.state); }
    var act = b.dataset.action;
    if (act === 'mic') { setState('idle'); mic(true); }
    if (act === 'speak') speak('Done! Your reminder is set for 8 am tomorrow.');
    if (act === 'long') speak(LONG);
    if (act === 'hostile') speak(HOSTILE);
    if (act === 'cycle') cycle();
    if (act === 'sample-picture') setImage(samplePicture());
    if (act === 'no-picture') setImage(null);
  });
  document.querySelector('.toolbar').addEventListener('change', function (e) {
    var act = e.target.dataset.action;
    if (act === 'envelope') envelope(e.target.checked);
    if (act === 'picture' && e.target.files && e.target.files[0]) readPicture(e.target.files[0]);
    if (act === 'look') {
      look = e.target.value;
      each(function (a) { a.setLook(look); });
    }
    if (act === 'dark' || act === 'reduce') {
      if (act === 'dark') { dark = e.target.checked; themeParam = dark ? 'dark' : 'light'; }
      else reduce = e.target.checked;
      document.body.classList.toggle('dark', dark);
      frames.forEach(function (f) { f.src = src(); });
    }
  });
})();

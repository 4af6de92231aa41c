/*
 * Hermes default avatar — implements the contract of spec A-26:
 *
 *   window.hermesAvatar.setState(state)        'idle' | 'thinking' | 'speaking' | 'listening' | 'waiting' | 'error' |
 *                                              'tool' (unknown → 'idle')
 *   window.hermesAvatar.speak(text)            show a line of the agent in a speech bubble, move the mouth
 *   window.hermesAvatar.setVolume(level)       microphone level while recording, 0..1
 *   window.hermesAvatar.setSpeechLevel(level)  optional: envelope of the agent's voice, 0..1, for lip-sync
 *   window.hermesAvatar.setLook(name)          optional: colour theme, 'lilac' | 'mint' | 'sunset' | 'ocean' |
 *                                              'graphite' (unknown → 'lilac'); also `?look=NAME` in the page URL
 *   window.hermesAvatar.setImage(url)          optional: a picture the user picked, shown round in place of Pip
 *                                              with the same motion: a `data:image/(png|jpeg|webp|gif);base64,…`
 *                                              URL of at most 4 MiB of text whose first bytes are a PNG, JPEG, GIF
 *                                              or WebP signature → shown, true; null or '' (or only blanks) → back
 *                                              to Pip, true; anything else (http(s):, javascript:, svg+xml, other
 *                                              types, non-strings, longer text) is refused → false, nothing changes
 *
 * The API object exists as soon as this file has run (it is loaded synchronously in <head>); calls made before the
 * document is parsed are remembered and applied on DOMContentLoaded. Text from the agent is hostile: it is only
 * ever assigned with textContent. No network, no eval, no innerHTML.
 *
 * A picture (setImage) is an SVG <image> clipped to a circle where Pip's body is, in the same view box (so the
 * speech bubble's layout and the glow need nothing new); the root carries data-image="1" while it is shown. It
 * breathes like Pip (a CSS loop, paused like his), bounces and stretches with the mouth's openness while speaking
 * (--open on the root, 0..1: setSpeechLevel's envelope when fresh, else the procedural syllables), and a ring
 * around it shows the microphone level while listening and the pose's colour otherwise; thinking, waiting, error
 * and tool also get a badge with an icon (not colour alone). The page's CSP allows images from data: URLs only.
 */
(function () {
  'use strict';

  var STATES = ['idle', 'thinking', 'speaking', 'listening', 'waiting', 'error', 'tool'];
  // States in which setVolume() shows the listening look: nothing is going on, or a card waits for the user's answer
  // (which the user may be giving by voice). The others are the agent's own business and stay as the app set them.
  var MIC_STATES = ['idle', 'waiting'];
  // States in which a line being said (speak()) shows the speaking look until it has been "said": the agent is
  // between things (idle), busy (thinking, tool) or has asked something (waiting). Not 'error': a worried face that
  // breaks into the cheerful talking pose would contradict the message.
  var TALK_STATES = ['idle', 'thinking', 'waiting', 'tool'];
  // Poses that come to rest after REST_MS (see wake()): the ones that can last for minutes or hours with nothing
  // happening — idle, a card nobody answers, a connection that stays lost. Thinking, tool, speaking and listening
  // are short-lived and have something moving on purpose.
  var RESTFUL_POSES = ['idle', 'waiting', 'error'];
  // Colour themes (avatar.css: [data-look="…"]); the first is the default.
  var LOOKS = ['lilac', 'mint', 'sunset', 'ocean', 'graphite'];
  var MIC_FRESH_MS = 1200; // setVolume() calls this recent mean "the user is talking"
  var SPEECH_FRESH_MS = 300; // setSpeechLevel() calls this recent drive the mouth instead of the procedural one
  // Longer lines are cut (with an ellipsis, at a word when one is near): the bubble is not a transcript. It stays up
  // for at most 30 s at ~55 ms a character (readingMs), so ~500 characters is what can be read in it; laying out
  // thousands more only cost a long frame when a long reply ended.
  var MAX_TEXT = 600;
  // setImage(): the app hands over the user's picture downscaled to ≤ 512 px, which is well under this as base64
  var MAX_IMAGE_CHARS = 4 * 1024 * 1024;
  var IMAGE_URL = /^data:image\/(?:png|jpeg|webp|gif);base64,/i;
  var BASE64 = /^[A-Za-z0-9+\/]+={0,2}$/;
  // the first bytes of a PNG, a JPEG, a GIF, a WebP file (decoded from the first 16 base64 characters)
  var RASTER_MAGIC = /^(?:\x89PNG\r\n\x1a\n|\xff\xd8\xff|GIF8[79]a|RIFF[\s\S]{4}WEBP)/;

  var model = {
    state: 'idle',
    micLevel: 0,
    micAt: -Infinity,
    speechLevel: 0,
    speechAt: -Infinity,
    text: '',
    textSeq: 0,
    talkUntil: 0,
    look: 'lilac',
    image: '', // the picture shown instead of Pip (a checked data: URL), '' for Pip
  };

  var dom = null; // set by init()
  var reducedMotion = false;

  function now() {
    return window.performance && typeof window.performance.now === 'function' ? window.performance.now() : Date.now();
  }

  function clamp01(value) {
    var n = typeof value === 'number' ? value : typeof value === 'string' ? parseFloat(value) : NaN;
    if (!isFinite(n) || n <= 0) return 0;
    return n >= 1 ? 1 : n;
  }

  function normaliseState(value) {
    if (typeof value !== 'string') return 'idle';
    var s = value.trim().toLowerCase();
    return STATES.indexOf(s) >= 0 ? s : 'idle';
  }

  function normaliseLook(value) {
    if (typeof value !== 'string') return LOOKS[0];
    var s = value.trim().toLowerCase();
    return LOOKS.indexOf(s) >= 0 ? s : LOOKS[0];
  }

  /* setImage()'s argument: the data: URL to show, '' for Pip, or null to refuse it. Nothing is coerced (an object's
     toString is never called), nothing is fetched: only a base64 data: URL of a raster type whose first bytes are
     such an image. An SVG (data:image/svg+xml) could hold script or refer to the network; it is refused. */
  function normaliseImage(value) {
    if (value === null) return '';
    if (typeof value !== 'string' || value.length > MAX_IMAGE_CHARS) return null;
    if (!/\S/.test(value)) return '';
    var head = IMAGE_URL.exec(value);
    if (!head) return null;
    var data = value.slice(head[0].length);
    if (data.length < 16 || !BASE64.test(data)) return null;
    var bytes = '';
    try {
      bytes = window.atob(data.slice(0, 16));
    } catch (e) {
      return null;
    }
    return RASTER_MAGIC.test(bytes) ? value : null;
  }

  function micFresh(t) {
    return t - model.micAt < MIC_FRESH_MS;
  }

  function talking(t) {
    return model.state === 'speaking' || t < model.talkUntil;
  }

  /* The visual pose: the app's state, refined by what is going on (setVolume while idle or waiting looks like
     listening, speak() while idle, thinking, waiting or tool looks like speaking until the line has been "said"). */
  function currentPose(t) {
    var s = model.state;
    if (MIC_STATES.indexOf(s) >= 0 && micFresh(t)) return 'listening';
    if (TALK_STATES.indexOf(s) >= 0 && t < model.talkUntil) return 'speaking';
    return s;
  }

  /* ------------------------------------------------------------------------------------------------------------ */
  /* public API                                                                                                    */

  var api = {
    setState: function (state) {
      model.state = normaliseState(state);
      if (model.state !== 'speaking') model.talkUntil = 0;
      if (dom) {
        applyPose();
        if (model.state !== 'speaking') bubbleMaybeHideSoon();
      }
    },
    speak: function (text) {
      var s = '';
      if (typeof text === 'string') s = text;
      else if (text != null) {
        try {
          s = String(text);
        } catch (e) {
          s = '';
        }
      }
      if (s.length > MAX_TEXT) {
        var cut = s.slice(0, MAX_TEXT - 1);
        var space = cut.search(/\s\S*$/);
        s = (space > MAX_TEXT - 60 ? cut.slice(0, space) : cut) + '\u2026';
      }
      model.text = s;
      model.textSeq += 1;
      var spoken = s.replace(/\s+/g, ' ').trim().length;
      // ~15 characters per second is a typical TTS pace; the mouth moves for that long
      model.talkUntil = spoken ? now() + Math.min(15000, Math.max(900, spoken * 65)) : 0;
      if (dom) {
        renderBubble();
        applyPose();
      }
    },
    setVolume: function (level) {
      model.micLevel = clamp01(level);
      model.micAt = now();
      if (dom) applyVolume();
    },
    setSpeechLevel: function (level) {
      model.speechLevel = clamp01(level);
      model.speechAt = now();
      if (dom) applyPose();
    },
    setLook: function (name) {
      model.look = normaliseLook(name);
      applyLook();
      if (dom) applyPose(); // a call like any other: wakes a resting avatar, so the new colours are seen breathing
    },
    setImage: function (url) {
      var image = normaliseImage(url);
      if (image === null) return false; // refused: the avatar stays as it is
      model.image = image;
      if (dom) {
        applyImage();
        applyPose();
      }
      return true;
    },
  };

  // The look can also come with the page (`avatar.html?look=mint`); a setLook() call wins over it. It is read now,
  // while <head> is parsed, and put on <html> at once: the stylesheet colours the page from that attribute too, so
  // even a paint before DOMContentLoaded is in the right colours.
  model.look = normaliseLook(queryParam('look'));
  applyLook();

  try {
    Object.freeze(api);
    Object.defineProperty(window, 'hermesAvatar', { value: api, enumerable: true, configurable: false, writable: false });
  } catch (e) {
    window.hermesAvatar = api;
  }

  /* ------------------------------------------------------------------------------------------------------------ */
  /* pose, volume                                                                                                  */

  var poseTimer = 0;

  /* data-look on <html> (available from the first script on: the first paint) and on the root (the observable one,
     set in init()); avatar.css defines each look's palette on whichever element carries the attribute. */
  function applyLook() {
    try {
      var html = document.documentElement;
      if (html && html.getAttribute('data-look') !== model.look) html.setAttribute('data-look', model.look);
      if (dom && dom.root.getAttribute('data-look') !== model.look) dom.root.setAttribute('data-look', model.look);
    } catch (e) {
      // no document element (cannot happen in a page; keeps the contract that no method throws)
    }
  }

  // After REST_MS in the idle pose with nothing happening, the looping idle animations (breathing, the hat, the
  // wings) pause where they are: each frame of them is a repaint, and a page repainting 60 times a second costs
  // a core or more where WebKit composites in software (measured: 1.5 cores idle). Blinks and glances go on;
  // any call wakes the avatar. The waiting and error poses rest the same way (their glow pulse and card sway hold
  // still too): an unanswered card or a lost connection can last for hours. `?rest=MS` changes the delay
  // (100 ms .. 10 min).
  var REST_MS = 30000;
  // The idle timers' pace (blinks, glances): 1; `?pace=0.01` runs them 100 times faster (the page's tests).
  var PACE = 1;
  var restTimer = 0;

  function wake(pose) {
    clearTimeout(restTimer);
    dom.root.classList.remove('resting');
    if (RESTFUL_POSES.indexOf(pose) >= 0) {
      restTimer = setTimeout(function () {
        if (RESTFUL_POSES.indexOf(dom.root.getAttribute('data-pose')) >= 0) dom.root.classList.add('resting');
      }, REST_MS);
    }
  }

  function applyPose() {
    var t = now();
    var pose = currentPose(t);
    var root = dom.root;
    if (root.getAttribute('data-state') !== model.state) root.setAttribute('data-state', model.state);
    if (root.getAttribute('data-pose') !== pose) {
      root.setAttribute('data-pose', pose);
      if (Math.random() < 0.6) blink(); // people tend to blink when they switch what they are doing
    }
    if (t < model.talkUntil) root.setAttribute('data-talking', '');
    else root.removeAttribute('data-talking');

    // wake up again when a derived pose (listening from the mic, speaking from speak()) runs out
    clearTimeout(poseTimer);
    var next = Infinity;
    if (micFresh(t)) next = Math.min(next, model.micAt + MIC_FRESH_MS - t);
    if (t < model.talkUntil) next = Math.min(next, model.talkUntil - t);
    if (next !== Infinity) poseTimer = setTimeout(applyPose, Math.ceil(next) + 20);

    wake(pose);
    ensureLoop();
  }

  /* the picture (or Pip again): data-image on the root, the <image>'s href; the frame loop then drives it */
  function applyImage() {
    var root = dom.root;
    if (model.image) {
      if (dom.image.getAttribute('href') !== model.image) dom.image.setAttribute('href', model.image);
      if (root.getAttribute('data-image') !== '1') root.setAttribute('data-image', '1');
    } else {
      root.removeAttribute('data-image');
      dom.image.removeAttribute('href');
      root.style.removeProperty('--open');
    }
    lastPicture = ['', '', '', ''];
    layoutForBubble();
  }

  function applyVolume() {
    dom.root.style.setProperty('--level', String(Math.round(model.micLevel * 1000) / 1000));
    applyPose();
  }

  /* ------------------------------------------------------------------------------------------------------------ */
  /* the animation loop: runs only while something moves (mouth, glow, orbit), then stops                          */

  var MOUTH_X = 100;
  var MOUTH_Y = 152;
  var REST = { open: 0, width: 9, smile: 4.5, shift: 0 };

  var cur = { open: 0, width: 9, smile: 4.5, shift: 0, glow: 0, glowScale: 0.9, talk: 0, ring: 0, ringScale: 1 };
  var rafId = 0;
  var lastFrame = 0;
  var lastPath = '';
  var lastGlow = ['', ''];
  var lastPicture = ['', '', '', ''];
  var orbitPhase = 0;

  // procedural speech: syllables with random length and loudness, grouped into words
  var syl = { start: 0, end: 0, peak: 0, width: 9, gap: true, left: 0 };

  function nextSyllable(t) {
    syl.start = t;
    if (syl.left <= 0) {
      syl.gap = true;
      syl.end = t + 70 + Math.random() * 190;
      syl.left = 1 + Math.floor(Math.random() * 4);
      return;
    }
    syl.gap = false;
    syl.left -= 1;
    syl.end = t + 95 + Math.random() * 140;
    syl.peak = 0.35 + Math.random() * 0.65;
    syl.width = 7 + Math.random() * 4.5;
  }

  function proceduralOpen(t) {
    if (t >= syl.end || t < syl.start) nextSyllable(t);
    if (syl.gap) return { open: 0.04, width: 8.5 };
    var u = (t - syl.start) / (syl.end - syl.start);
    return { open: syl.peak * Math.pow(Math.sin(Math.PI * u), 0.8), width: syl.width };
  }

  function targets(t, pose) {
    // talk: how far the picture is stretched by the voice (the mouth's openness, only while speaking); ring: the
    // opacity of the coloured ring around the picture, ringScale its size
    var tg = {
      open: REST.open,
      width: REST.width,
      smile: REST.smile,
      shift: 0,
      glow: 0,
      glowScale: 0.9,
      talk: 0,
      ring: 0,
      ringScale: 1,
    };
    if (pose === 'thinking') {
      tg.open = 0.05;
      tg.width = 4.2;
      tg.smile = -0.5;
      tg.shift = 5;
      tg.glow = reducedMotion ? 0.4 : 0.33 + 0.12 * Math.sin(t / 450);
      tg.glowScale = 0.95;
      tg.ring = 0.9;
    } else if (pose === 'listening') {
      var lv = model.micLevel;
      tg.open = 0.14 + 0.5 * lv;
      tg.width = 5 + 2.5 * lv;
      tg.smile = 2.5;
      tg.glow = 0.3 + 0.7 * lv;
      tg.glowScale = 0.86 + 0.24 * lv;
      tg.ring = 0.3 + 0.7 * lv;
      tg.ringScale = 1 + 0.07 * lv;
    } else if (pose === 'speaking') {
      var m;
      if (t - model.speechAt < SPEECH_FRESH_MS) {
        m = { open: model.speechLevel, width: 8 + 2.5 * model.speechLevel + Math.sin(t / 130) * 0.8 };
      } else if (reducedMotion) {
        m = { open: 0.32, width: 9 };
      } else {
        m = proceduralOpen(t);
      }
      tg.open = m.open;
      tg.width = m.width;
      tg.smile = 5;
      tg.glow = 0.14 + 0.4 * m.open;
      tg.glowScale = 0.9 + 0.08 * m.open;
      tg.talk = m.open;
      tg.ring = 0.35 + 0.65 * m.open;
      tg.ringScale = 1 + 0.06 * m.open;
    } else if (pose === 'waiting') {
      // an expectant little smile; the golden glow's gentle pulse is a CSS animation of the circle inside the
      // glow (avatar.css), so this loop can stop while a card waits, perhaps for a long time
      tg.open = 0.08;
      tg.width = 7;
      tg.smile = 4;
      tg.glow = 0.62;
      tg.glowScale = 0.95;
      tg.ring = 0.95;
    } else if (pose === 'error') {
      // a small frown (a negative smile bends the lips down), a steady muted glow: worried, not alarming
      tg.open = 0;
      tg.width = 6.5;
      tg.smile = -3.4;
      tg.glow = 0.4;
      tg.glowScale = 0.92;
      tg.ring = 0.95;
    } else if (pose === 'tool') {
      // concentrating: a short straight mouth pulled to one side, a faint steady glow
      tg.open = 0;
      tg.width = 5.5;
      tg.smile = 0.6;
      tg.shift = -3;
      tg.glow = 0.22;
      tg.glowScale = 0.9;
      tg.ring = 0.9;
    }
    return tg;
  }

  function mouthPath(open, width, smile, shift) {
    var cx = MOUTH_X + shift;
    var y = MOUTH_Y;
    var w = width;
    var k = smile * 0.75; // depth of the smile curve (cubic control points)
    var top = k - open * 3.5;
    var bottom = k + open * 21;
    var c = w * 0.62;
    function f(n) {
      return (Math.round(n * 10) / 10).toString();
    }
    return (
      'M' + f(cx - w) + ' ' + f(y) +
      ' C' + f(cx - c) + ' ' + f(y + top) + ' ' + f(cx + c) + ' ' + f(y + top) + ' ' + f(cx + w) + ' ' + f(y) +
      ' C' + f(cx + c) + ' ' + f(y + bottom) + ' ' + f(cx - c) + ' ' + f(y + bottom) + ' ' + f(cx - w) + ' ' + f(y) +
      ' Z'
    );
  }

  function ease(currentValue, target, dt, tau) {
    return currentValue + (target - currentValue) * (1 - Math.exp(-dt / tau));
  }

  var FRAME_MS = 31; // draw at most ~30 times a second: plenty for a mouth, half the repaints

  function frame() {
    rafId = 0;
    var t = now();
    if (lastFrame && t - lastFrame < FRAME_MS - 4) {
      rafId = window.requestAnimationFrame(frame);
      return;
    }
    var dt = lastFrame ? Math.min(100, Math.max(1, t - lastFrame)) : 16;
    lastFrame = t;
    var pose = currentPose(t);
    if (dom.root.getAttribute('data-pose') !== pose) applyPose();

    var tg = targets(t, pose);
    var fast = reducedMotion ? 1 : 0; // reduced motion: jump to the pose, no tweening
    cur.open = fast ? tg.open : ease(cur.open, tg.open, dt, tg.open > cur.open ? 35 : 55);
    cur.width = fast ? tg.width : ease(cur.width, tg.width, dt, 70);
    cur.smile = fast ? tg.smile : ease(cur.smile, tg.smile, dt, 120);
    cur.shift = fast ? tg.shift : ease(cur.shift, tg.shift, dt, 160);
    cur.glow = ease(cur.glow, tg.glow, dt, pose === 'listening' ? 60 : 180);
    cur.glowScale = fast ? tg.glowScale : ease(cur.glowScale, tg.glowScale, dt, 90);
    // the picture's values (Pip's loop ends as it always did: without a picture they jump to their targets)
    var still = fast || !model.image;
    cur.talk = still ? tg.talk : ease(cur.talk, tg.talk, dt, tg.talk > cur.talk ? 35 : 55);
    cur.ring = !model.image ? tg.ring : ease(cur.ring, tg.ring, dt, pose === 'listening' || pose === 'speaking' ? 50 : 120);
    cur.ringScale = still ? tg.ringScale : ease(cur.ringScale, tg.ringScale, dt, 60);

    var d = mouthPath(cur.open, cur.width, cur.smile, cur.shift);
    if (d !== lastPath) {
      lastPath = d;
      dom.mouth.setAttribute('d', d);
      dom.mouth.setAttribute('data-open', (Math.round(cur.open * 100) / 100).toString());
      dom.tongue.setAttribute('cx', String(Math.round((MOUTH_X + cur.shift) * 10) / 10));
      dom.tongue.setAttribute('cy', String(Math.round((MOUTH_Y + cur.smile * 0.75 + cur.open * 16) * 10) / 10));
      dom.tongue.setAttribute('rx', String(Math.round(cur.width * 5.5) / 10));
      dom.tongue.setAttribute('ry', String(Math.round(Math.max(0, cur.open * 55)) / 10));
    }
    var glowOpacity = String(Math.round(cur.glow * 1000) / 1000);
    var glowTransform = 'scale(' + Math.round(cur.glowScale * 1000) / 1000 + ')';
    if (glowOpacity !== lastGlow[0]) dom.glow.style.opacity = lastGlow[0] = glowOpacity;
    if (glowTransform !== lastGlow[1]) dom.glow.style.transform = lastGlow[1] = glowTransform;

    orbit(t, dt, pose);
    if (model.image) drawPicture();

    var settled =
      Math.abs(cur.open - tg.open) < 0.003 &&
      Math.abs(cur.width - tg.width) < 0.02 &&
      Math.abs(cur.smile - tg.smile) < 0.02 &&
      Math.abs(cur.shift - tg.shift) < 0.02 &&
      Math.abs(cur.glow - tg.glow) < 0.004 &&
      Math.abs(cur.glowScale - tg.glowScale) < 0.002 &&
      Math.abs(cur.talk - tg.talk) < 0.003 &&
      Math.abs(cur.ring - tg.ring) < 0.004 &&
      Math.abs(cur.ringScale - tg.ringScale) < 0.002;
    var animated = pose === 'speaking' || pose === 'listening' || (pose === 'thinking' && !reducedMotion);
    if (!settled || animated) {
      rafId = window.requestAnimationFrame(frame);
    } else {
      lastFrame = 0;
    }
  }

  function ensureLoop() {
    if (!dom || rafId || typeof window.requestAnimationFrame !== 'function') return;
    lastFrame = 0;
    rafId = window.requestAnimationFrame(frame);
  }

  /* The picture: --open on the root (the mouth's openness while speaking, 0..1), a stretch and a little hop with it
     (pivoting at the picture's bottom; none with reduced motion), the ring's opacity and size. */
  function drawPicture() {
    var o = Math.round(cur.talk * 100) / 100;
    var open = String(o);
    var hop = '';
    if (!reducedMotion && o > 0) {
      hop =
        'translate(0px, ' + Math.round(-6 * o * 100) / 100 + 'px) ' +
        'scale(' + Math.round((1 - 0.035 * o) * 1000) / 1000 + ', ' + Math.round((1 + 0.08 * o) * 1000) / 1000 + ')';
    }
    var ring = String(Math.round(cur.ring * 1000) / 1000);
    var ringTransform = 'scale(' + Math.round((reducedMotion ? 1 : cur.ringScale) * 1000) / 1000 + ')';
    if (open !== lastPicture[0]) dom.root.style.setProperty('--open', (lastPicture[0] = open));
    if (hop !== lastPicture[1]) dom.pictureTalk.style.transform = lastPicture[1] = hop;
    if (ring !== lastPicture[2]) dom.ring.style.opacity = lastPicture[2] = ring;
    if (ringTransform !== lastPicture[3]) dom.ring.style.transform = lastPicture[3] = ringTransform;
  }

  /* three dots on a tilted ellipse around the cap; behind the cap on the far side */
  var ORBIT = { cx: 100, cy: 46, rx: 62, ry: 14, tilt: -0.12 };

  function orbit(t, dt, pose) {
    if (pose !== 'thinking') return;
    if (!reducedMotion) orbitPhase += dt * 0.0021;
    var cosT = Math.cos(ORBIT.tilt);
    var sinT = Math.sin(ORBIT.tilt);
    for (var i = 0; i < dom.dots.length; i++) {
      var dot = dom.dots[i];
      var a = reducedMotion ? 0.9 + i * 0.55 : orbitPhase + (i * Math.PI * 2) / 3;
      var x = Math.cos(a) * ORBIT.rx;
      var y = Math.sin(a) * ORBIT.ry;
      var depth = Math.sin(a); // > 0: in front
      var px = ORBIT.cx + x * cosT - y * sinT;
      var py = ORBIT.cy + x * sinT + y * cosT;
      dot.setAttribute('cx', px.toFixed(1));
      dot.setAttribute('cy', py.toFixed(1));
      dot.setAttribute('r', (2.8 + 1.6 * (depth + 1) * 0.5 + (i === 0 ? 0.7 : 0)).toFixed(2));
      dot.style.opacity = String(Math.round((0.55 + 0.45 * (depth + 1) * 0.5) * 100) / 100);
      var layer = depth >= 0 ? dom.orbitFront : dom.orbitBack;
      if (dot.parentNode !== layer) layer.appendChild(dot);
    }
  }

  /* ------------------------------------------------------------------------------------------------------------ */
  /* speech bubble                                                                                                 */

  var bubbleTimer = 0;
  var bubbleShownAt = 0;
  var bubbleMinMs = 0;
  var scrollTimers = [];

  function readingMs(text) {
    return Math.min(30000, Math.max(3500, 1800 + text.length * 55));
  }

  function clearScroll() {
    for (var i = 0; i < scrollTimers.length; i++) clearTimeout(scrollTimers[i]);
    scrollTimers = [];
    dom.bubbleText.style.transition = 'none';
    dom.bubbleText.style.transform = '';
    dom.viewport.classList.remove('overflowing', 'scrolled', 'at-end');
  }

  function renderBubble() {
    var text = model.text;
    clearTimeout(bubbleTimer);
    clearScroll();
    if (!text || !text.trim()) {
      hideBubble();
      return;
    }
    dom.bubbleText.textContent = text; // never innerHTML: agent output is untrusted
    var root = dom.root;
    if (root.classList.contains('has-bubble')) {
      root.classList.remove('bubble-pop');
      void root.offsetWidth; // restart the pop animation
      root.classList.add('bubble-pop');
    }
    root.classList.add('has-bubble');
    bubbleShownAt = now();
    bubbleMinMs = readingMs(text);
    layoutForBubble();
    startScroll(bubbleMinMs);
    bubbleTimer = setTimeout(bubbleMaybeHide, bubbleMinMs);
  }

  function bubbleMaybeHide() {
    clearTimeout(bubbleTimer);
    if (!dom.root.classList.contains('has-bubble')) return;
    var t = now();
    var left = bubbleShownAt + bubbleMinMs - t;
    if (left > 0) {
      bubbleTimer = setTimeout(bubbleMaybeHide, left + 10);
    } else if (model.state === 'speaking') {
      // the voice is still going: keep the line up, look again later
      bubbleTimer = setTimeout(bubbleMaybeHide, 1000);
    } else {
      hideBubble();
    }
  }

  /* the app said the agent stopped speaking: let the line linger briefly, then fade */
  function bubbleMaybeHideSoon() {
    if (!dom.root.classList.contains('has-bubble')) return;
    var left = bubbleShownAt + bubbleMinMs - now();
    clearTimeout(bubbleTimer);
    bubbleTimer = setTimeout(bubbleMaybeHide, Math.max(left, 2500));
  }

  function hideBubble() {
    clearTimeout(bubbleTimer);
    var root = dom.root;
    if (!root.classList.contains('has-bubble')) return;
    root.classList.remove('has-bubble', 'bubble-pop');
    root.style.setProperty('--stage-top', '0px');
    var seq = model.textSeq;
    bubbleTimer = setTimeout(function () {
      if (seq === model.textSeq && !root.classList.contains('has-bubble')) {
        dom.bubbleText.textContent = '';
        clearScroll();
      }
    }, 450);
  }

  /* Move the character down (shrinking it if needed) just enough that the bubble does not cover its face. */
  function layoutForBubble() {
    var root = dom.root;
    if (!root.classList.contains('has-bubble')) {
      root.style.setProperty('--stage-top', '0px');
      return;
    }
    var W = root.clientWidth;
    var H = root.clientHeight;
    var bubbleBottom = dom.bubble.offsetTop + dom.bubble.offsetHeight + 8;
    if (!W || !H || !dom.bubble.offsetHeight) return; // no layout (hidden iframe, tests)
    var ASPECT = 222 / 216; // the SVG viewBox: -8 0 216 222
    // Part of the view box above the face that the bubble may overlap: the orbit and the top of the cap, and in
    // small windows the whole cap (the face matters more than the hat when space is short). A picture: down to the
    // top of its ring, in small windows a little of the picture too (like the cap).
    var OVERLAP = (H < 300 ? 84 : model.image ? 53 : 40) / 222;
    function faceTop(top) {
      var h = H - top;
      var ch = Math.min(h, W * ASPECT);
      return top + (h - ch) / 2 + ch * OVERLAP;
    }
    var top = 0;
    if (faceTop(0) < bubbleBottom) {
      var lo = 0;
      var hi = H * 0.6;
      for (var i = 0; i < 14; i++) {
        var mid = (lo + hi) / 2;
        if (faceTop(mid) < bubbleBottom) lo = mid;
        else hi = mid;
      }
      top = hi;
    }
    root.style.setProperty('--stage-top', Math.round(top) + 'px');
  }

  /* Long lines scroll slowly (teleprompter) while they are read; with reduced motion they turn pages instead. */
  function startScroll(totalMs) {
    var vp = dom.viewport;
    var el = dom.bubbleText;
    var over = el.scrollHeight - vp.clientHeight;
    if (!(over > 2)) return;
    vp.classList.add('overflowing');
    var delay = 1400;
    var travel = Math.max(1500, totalMs - delay - 1600);
    if (reducedMotion) {
      var page = Math.max(1, vp.clientHeight - 18);
      var pages = Math.ceil(over / page);
      for (var p = 1; p <= pages; p++) {
        (function (p) {
          scrollTimers.push(
            setTimeout(function () {
              var y = Math.min(over, p * page);
              el.style.transform = 'translateY(' + -y + 'px)';
              vp.classList.add('scrolled');
              if (y >= over) vp.classList.add('at-end');
            }, delay + (travel * p) / pages)
          );
        })(p);
      }
      return;
    }
    void el.offsetHeight;
    el.style.transition = 'transform ' + Math.round(travel) + 'ms linear ' + delay + 'ms';
    el.style.transform = 'translateY(' + -over + 'px)';
    scrollTimers.push(setTimeout(function () { vp.classList.add('scrolled'); }, delay + 200));
    scrollTimers.push(setTimeout(function () { vp.classList.add('at-end'); }, delay + travel));
  }

  /* ------------------------------------------------------------------------------------------------------------ */
  /* blinking and glances: timers, no loop                                                                         */

  /** Resting (nothing happening for a while): calmer. Each blink or glance is a few dozen repainted frames, which is
   *  most of what a visible, idle window costs where WebKit paints in software. */
  function isResting() {
    return !!dom && dom.root.classList.contains('resting');
  }

  function scheduleBlink() {
    var wait = isResting() ? 7000 + Math.random() * 7000 : 2200 + Math.random() * 4200;
    setTimeout(function () {
      blink();
      if (!isResting() && Math.random() < 0.22) setTimeout(blink, 260 * PACE); // sometimes a double blink
      scheduleBlink();
    }, wait * PACE);
  }

  function blink() {
    if (!dom || document.hidden) return;
    dom.root.classList.add('blink');
    setTimeout(function () {
      dom.root.classList.remove('blink');
    }, 130 * PACE);
  }

  function scheduleGlance() {
    setTimeout(function () {
      // resting: the eyes stay put
      if (!document.hidden && dom.root.getAttribute('data-pose') === 'idle' && !isResting()) {
        var dirs = ['left', 'right', 'up'];
        dom.root.setAttribute('data-glance', dirs[Math.floor(Math.random() * dirs.length)]);
        setTimeout(function () {
          dom.root.removeAttribute('data-glance');
        }, (900 + Math.random() * 700) * PACE);
      }
      scheduleGlance();
    }, (6000 + Math.random() * 7000) * PACE);
  }

  /* ------------------------------------------------------------------------------------------------------------ */
  /* setup                                                                                                         */

  /**
   * Whether the app's shell found the font `system-ui` names missing (`window.__HERMES_HOST__.uiFontMissing`: this
   * window's own, or the app's when this page is its same-origin frame).
   */
  function hostUiFontMissing() {
    var host = null;
    try {
      host = window.__HERMES_HOST__ || (window.parent !== window ? window.parent.__HERMES_HOST__ : null);
    } catch (e) {
      host = null; // a parent of another origin
    }
    return !!host && host.uiFontMissing === true;
  }

  function queryParam(name) {
    try {
      return new URLSearchParams(window.location.search).get(name);
    } catch (e) {
      return null;
    }
  }

  function setReducedMotion(on) {
    reducedMotion = !!on;
    dom.root.classList.toggle('reduced-motion', reducedMotion);
    ensureLoop();
  }

  function init() {
    if (dom) return;
    var root = document.getElementById('hermes-avatar');
    if (!root) return;
    dom = {
      root: root,
      mouth: root.querySelector('.mouth'),
      tongue: root.querySelector('.tongue'),
      glow: root.querySelector('.glow-wrap'),
      bubble: root.querySelector('.bubble'),
      viewport: root.querySelector('.bubble-viewport'),
      bubbleText: root.querySelector('.bubble-text'),
      orbitFront: root.querySelector('.orbit-front'),
      orbitBack: root.querySelector('.orbit-back'),
      dots: Array.prototype.slice.call(root.querySelectorAll('.orbit-dot')),
      image: root.querySelector('.picture-img'),
      pictureTalk: root.querySelector('.picture-talk'),
      ring: root.querySelector('.picture-ring-wrap'),
    };
    // a picture the engine cannot decode after all: Pip again rather than an empty circle
    dom.image.addEventListener('error', function () {
      if (model.image && dom.image.getAttribute('href') === model.image) {
        model.image = '';
        applyImage();
        applyPose();
      }
    });

    // Optional page parameters (for hosts whose theme differs from the system's, and for the dev harness).
    var theme = queryParam('theme');
    if (theme === 'light' || theme === 'dark') root.setAttribute('data-theme', theme);
    // the font stack (avatar.css): Linux's desktop font, without asking fontconfig about fonts Linux has not got
    if (/Linux|X11|FreeBSD|OpenBSD/.test(navigator.userAgent) && !/Android/.test(navigator.userAgent)) {
      root.setAttribute('data-platform', 'linux');
      // the font system-ui names is not installed (the app's shell found out: src-tauri/src/fonts.rs): sans-serif
      if (hostUiFontMissing()) root.setAttribute('data-ui-font', 'missing');
    }
    var motion = queryParam('motion');
    var rest = Number(queryParam('rest'));
    if (rest >= 100 && rest <= 600000) REST_MS = rest;
    var pace = Number(queryParam('pace'));
    if (pace >= 0.001 && pace <= 1) PACE = pace;

    var mq = null;
    if (typeof window.matchMedia === 'function') {
      try {
        mq = window.matchMedia('(prefers-reduced-motion: reduce)');
      } catch (e) {
        mq = null;
      }
    }
    if (motion === 'reduce') setReducedMotion(true);
    else setReducedMotion(!!(mq && mq.matches));
    if (mq && motion !== 'reduce') {
      var onChange = function (e) {
        setReducedMotion(e.matches);
      };
      if (typeof mq.addEventListener === 'function') mq.addEventListener('change', onChange);
      else if (typeof mq.addListener === 'function') mq.addListener(onChange);
    }

    // apply whatever arrived before the document was ready
    applyLook();
    applyImage();
    root.style.setProperty('--level', String(Math.round(model.micLevel * 1000) / 1000));
    applyPose();
    if (model.text) renderBubble();

    window.addEventListener('resize', layoutForBubble);
    scheduleBlink();
    scheduleGlance();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();

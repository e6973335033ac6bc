"""The browser suite's checks of the player and the pages beside the list: gapless joins measured
on a recording of the page's own output, ReplayGain in the audio graph, synced lyrics, the queue
resumed on another device, shares, the admin and settings pages, Japanese, the offline shell, axe
on every view, dialog and theme, a keyboard walk, and phone-sized screenshots.

Each check takes `kit`, web_page_test.py's module (its wait, js, api, shot, BASE, SHELF, …),
and the driver. Files the checks need are written here: a tone split across three FLAC files
(tagged by mutagen, as Picard writes), imported with `shelf import`.
"""

import array
import base64
import json
import time
import math
import os
import re
import subprocess
import tempfile
import urllib.request
import wave

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

RATE = 44100
# 441 Hz is exactly 100 samples a period at 44.1 kHz, and 2.1 s is not a whole number of periods:
# the three files end and start mid-period with the phase running on (so any silence at a join is
# the player's), and each starts at another phase (so they are not the same audio to the import).
TONE_HZ = 441.0
TRACK_SECONDS = 2.1
GAIN = {"trackGain": -3.0, "trackPeak": 0.5, "albumGain": -4.0, "albumPeak": 0.6}
LRC = "[00:00.00]First line of the tone\n[00:00.80]Second line\n[00:01.40]Third line\n"


def write_tone_album(directory):
    """Three FLAC files of one continuous tone and one untagged-gain track; returns the folder."""
    from mutagen.flac import FLAC  # the project's .venv has mutagen (make subsonic-client)

    os.makedirs(directory, exist_ok=True)
    per = int(RATE * TRACK_SECONDS)
    for index in range(3):
        raw = os.path.join(directory, f"tone-{index + 1}.wav")
        samples = array.array("h", (int(9000 * math.sin(2 * math.pi * TONE_HZ * k / RATE)) for k in range(index * per, (index + 1) * per)))
        with wave.open(raw, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            out.writeframes(samples.tobytes())
        path = os.path.join(directory, f"{index + 1:02d} Tone {index + 1}.flac")
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", raw, "-c:a", "flac", path], check=True)
        os.remove(raw)
        tags = FLAC(path)
        tags["title"] = f"Tone {index + 1}"
        tags["artist"] = "Tone Maker"
        tags["albumartist"] = "Tone Maker"
        tags["album"] = "Gapless Tone"
        tags["tracknumber"] = str(index + 1)
        tags["tracktotal"] = "3"
        tags["discnumber"] = "1"
        tags["replaygain_track_gain"] = f"{GAIN['trackGain']:.2f} dB"
        tags["replaygain_track_peak"] = f"{GAIN['trackPeak']:.6f}"
        tags["replaygain_album_gain"] = f"{GAIN['albumGain']:.2f} dB"
        tags["replaygain_album_peak"] = f"{GAIN['albumPeak']:.6f}"
        if index == 0:
            tags["lyrics"] = LRC
        tags.save()
    plain = os.path.join(directory, "plain")
    os.makedirs(plain, exist_ok=True)
    raw = os.path.join(plain, "plain.wav")
    with wave.open(raw, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(array.array("h", (int(6000 * math.sin(2 * math.pi * 330 * k / RATE)) for k in range(3 * RATE))).tobytes())
    path = os.path.join(plain, "Plain.flac")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", raw, "-c:a", "flac", path], check=True)
    os.remove(raw)
    tags = FLAC(path)
    tags["title"] = "No Gain Tagged"
    tags["artist"] = "Tone Maker"
    tags["album"] = "Plain"
    tags.save()
    return directory


def import_tones(kit):
    """Writes and imports the tone album; returns its tracks (native JSON) in track order."""
    folder = os.path.join(kit.ARTIFACTS, "tones")
    subprocess.run(["rm", "-rf", folder], check=True)
    write_tone_album(folder)
    result = subprocess.run([kit.SHELF, "--library", kit.LIBRARY, "import", folder, "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    listed = json.loads(subprocess.run([kit.SHELF, "--library", kit.LIBRARY, "tracks", "--filter", 'album:="Gapless Tone"', "--sort", "album", "--json"],
                                       capture_output=True, text=True, check=True).stdout)["items"]
    assert len(listed) == 3, listed
    return sorted(listed, key=lambda t: t["trackNumber"])


def player_state(kit, driver):
    return kit.js(driver, """
        const p = window.shelf && window.shelf.player;
        if (!p) return null;
        return {track: p.track ? p.track.id : null, current: p.current, playing: document.querySelector('.player').dataset.state === 'playing',
                position: p.position(), joins: p.engine ? p.engine.joins.map(j => ({from: j.from, to: j.to, gap: j.gap})) : [],
                gain: p.engine ? p.engine.trackGain() : null};
    """)


def play_tracks(kit, driver, tracks, start=0):
    kit.js(driver, "window.shelf.player.playNow(arguments[0], arguments[1])", tracks, start)


def stop_playing(kit, driver):
    kit.js(driver, "window.shelf.player.clear()")


RECORD_START = """
// Play first, then tap: the engine makes its context at the first track's rate as playback
// starts (synchronously, before the file is fetched), so nothing is resampled file by file.
const done = arguments[arguments.length - 1];
const player = window.shelf.player;
player.playNow(arguments[0], 0);
const context = player.engine.context;
const tap = context.createMediaStreamDestination();
player.engine.output.connect(tap);
const recorder = new MediaRecorder(tap.stream, {mimeType: 'audio/webm;codecs=opus', audioBitsPerSecond: 256000});
const chunks = [];
recorder.ondataavailable = (event) => { if (event.data.size) chunks.push(event.data); };
window.__recording = {recorder, chunks, tap, rate: context.sampleRate};
recorder.onstart = () => done(context.sampleRate);
recorder.start(250);
"""

RECORD_STOP = """
const done = arguments[arguments.length - 1];
const {recorder, chunks, tap} = window.__recording;
recorder.onstop = async () => {
  window.shelf.player.engine.output.disconnect(tap);
  const bytes = new Uint8Array(await new Blob(chunks, {type: 'audio/webm'}).arrayBuffer());
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  done(btoa(text));
};
recorder.stop();
"""


def longest_dropout_ms(webm_bytes):
    """The longest stretch (ms) inside the recorded tone where its level falls below half the
    tone's: the gaps at the joins, measured on the audio itself."""
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "out.webm")
        with open(source, "wb") as out:
            out.write(webm_bytes)
        pcm = subprocess.run(["ffmpeg", "-v", "error", "-i", source, "-ac", "1", "-ar", "48000", "-f", "s16le", "-"], capture_output=True, check=True).stdout
    samples = array.array("h")
    samples.frombytes(pcm)
    window = 48  # 1 ms
    levels = [max(abs(v) for v in samples[i:i + window]) for i in range(0, len(samples) - window, window)]
    loud = max(levels) if levels else 0
    assert loud > 2000, f"the recording holds no tone (peak {loud})"
    on = [i for i, level in enumerate(levels) if level > loud / 2]
    first, last = on[0], on[-1]
    run = longest = 0
    for level in levels[first:last]:
        run = run + 1 if level < loud / 2 else 0
        longest = max(longest, run)
    return longest, (last - first)


def test_gapless_and_replaygain(kit, driver, tracks):
    """Three tracks of one tone, played as the album: the engine's joins from the audio clock
    ≤ 20 ms, and the recording of the page's own output has no dropout longer than 20 ms; the
    gain node holds the album gain (capped by the album peak) in auto mode."""
    kit.js(driver, "window.shelf.player.setSettings({replayGain: 'auto', preamp: 0, defaultGain: -6, crossfade: 0})")
    stop_playing(kit, driver)
    # The page's audio context was made for the earlier tracks (48 kHz): these files are
    # resampled into it, as they are for a listener who played something else first.
    rate = kit.js_async(driver, RECORD_START, tracks)
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == tracks[0]["id"] and s["playing"], "the first tone playing")
    expected_album = min(10 ** (GAIN["albumGain"] / 20), 1 / GAIN["albumPeak"])
    gain = player_state(kit, driver)["gain"]
    assert abs(gain - expected_album) < 1e-3, f"album mode: gain node {gain}, expected {expected_album}"
    kit.wait(driver, lambda d: len(player_state(kit, d)["joins"]) >= 2, "both joins")
    kit.wait(driver, lambda d: not player_state(kit, d)["playing"], "the end of the album")
    encoded = kit.js_async(driver, RECORD_STOP)
    joins = player_state(kit, driver)["joins"]
    assert [j["to"] for j in joins[:2]] == [tracks[1]["id"], tracks[2]["id"]], joins
    for join in joins[:2]:
        assert abs(join["gap"]) <= 0.020, f"a join's gap on the audio clock: {join['gap'] * 1000:.1f} ms"
    dropout, length = longest_dropout_ms(base64.b64decode(encoded))
    gaps = ", ".join(f"{j['gap'] * 1000:.2f} ms" for j in joins[:2])
    print(f"     context at {rate} Hz; joins on the audio clock: {gaps}; "
          f"recorded tone {length} ms, longest dropout {dropout} ms", flush=True)
    assert dropout <= 20, f"the recording has a {dropout} ms dropout"
    assert length >= 3 * TRACK_SECONDS * 1000 - 100, f"the recording holds {length} ms of tone"

    # Track mode: the track gain; a pre-amp that would clip is held to 1/peak.
    kit.js(driver, "window.shelf.player.setSettings({replayGain: 'track', preamp: 0, defaultGain: -6, crossfade: 0})")
    play_tracks(kit, driver, tracks[1:2], 0)
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == tracks[1]["id"] and s["playing"], "one tone in track mode")
    expected = 10 ** (GAIN["trackGain"] / 20)
    kit.wait(driver, lambda d: abs(player_state(kit, d)["gain"] - expected) < 1e-3, f"track gain {expected}")
    kit.js(driver, "window.shelf.player.setSettings({replayGain: 'track', preamp: 12, defaultGain: -6, crossfade: 0})")
    kit.wait(driver, lambda d: abs(player_state(kit, d)["gain"] - 1 / GAIN["trackPeak"]) < 1e-3, "the pre-amp held by the peak")
    # A track without ReplayGain plays at the default gain.
    plain = kit.api(driver, "/api/tracks?filter=" + urllib.request.quote('title:="No Gain Tagged"'))["items"][0]
    kit.js(driver, "window.shelf.player.setSettings({replayGain: 'track', preamp: 0, defaultGain: -6, crossfade: 0})")
    play_tracks(kit, driver, [plain], 0)
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == plain["id"], "the untagged track")
    kit.wait(driver, lambda d: abs(player_state(kit, d)["gain"] - 10 ** (-6 / 20)) < 1e-3, "the default gain")
    # Crossfade: between albums the next track starts early (a negative gap on the audio clock);
    # within an album played in order, never.
    kit.js(driver, "window.shelf.player.setSettings({replayGain: 'track', preamp: 0, defaultGain: -6, crossfade: 1})")
    kit.js(driver, "window.shelf.player.engine.joins.length = 0")
    play_tracks(kit, driver, [tracks[0], tracks[1], plain], 0)
    kit.wait(driver, lambda d: len(player_state(kit, d)["joins"]) >= 2, "the crossfaded queue's joins")
    joins = player_state(kit, driver)["joins"][:2]
    assert joins[0]["to"] == tracks[1]["id"] and abs(joins[0]["gap"]) <= 0.020, f"crossfaded within the album: {joins[0]}"
    assert joins[1]["to"] == plain["id"] and -1.05 <= joins[1]["gap"] <= -0.95, f"no 1 s crossfade between albums: {joins[1]}"
    kit.js(driver, "window.shelf.player.setSettings({replayGain: 'track', preamp: 0, defaultGain: -6, crossfade: 0})")
    play_tracks(kit, driver, [plain], 0)
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == plain["id"] and s["playing"], "the untagged track again")
    # The volume slider is the listener's: it never touches the ReplayGain node.
    kit.js(driver, "const v = document.getElementById('volume'); v.value = '0.5'; v.dispatchEvent(new Event('input'));")
    assert abs(player_state(kit, driver)["gain"] - 10 ** (-6 / 20)) < 1e-3
    kit.js(driver, "const v = document.getElementById('volume'); v.value = '1'; v.dispatchEvent(new Event('input'));")
    stop_playing(kit, driver)


def test_synced_lyrics(kit, driver, tracks):
    """The first tone has LRC lyrics: the pane highlights the line of the moment and a click on a
    line seeks there."""
    kit.js(driver, "window.shelf.player.setSettings({replayGain: 'auto', preamp: 0, defaultGain: -6, crossfade: 0})")
    play_tracks(kit, driver, tracks[:1], 0)
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == tracks[0]["id"] and s["playing"], "the first tone")
    kit.js(driver, "window.shelf.player.pause ? window.shelf.player.pause() : null")
    toggle = driver.find_element(By.ID, "lyrics-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    lines = kit.wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#lyrics .lyric-line"), "the synced lines")
    assert [line.text for line in lines] == ["First line of the tone", "Second line", "Third line"], [line.text for line in lines]
    lines[2].click()
    kit.wait(driver, lambda d: player_state(kit, d)["position"] >= 1.35, "the seek to the third line")
    kit.wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#lyrics .lyric-line.current").text == "Third line", "the third line highlighted")
    kit.shot(driver, "lyrics-1280x800")
    toggle.click()
    stop_playing(kit, driver)


def test_queue_resume(kit, driver, tracks):
    """The queue saved from this device is offered on another (a new device ID) and resumed at
    its track and position, paused."""
    play_tracks(kit, driver, tracks, 1)
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == tracks[1]["id"] and s["position"] > 0.3, "the second tone playing")
    kit.js(driver, "window.shelf.player.toggle()")
    kit.wait(driver, lambda d: not player_state(kit, d)["playing"], "paused")
    kit.js_async(driver, "const done = arguments[arguments.length - 1]; window.shelf.player.saveQueue().then(() => done(true), (e) => done(String(e)));")
    saved = kit.api(driver, "/api/me")  # the session still works
    assert saved
    # Another device: a new device ID in this browser's storage, the page loaded again.
    kit.js(driver, "localStorage.removeItem('shelf.device'); localStorage.setItem('shelf.device', 'other-device-for-test');")
    driver.get(kit.BASE + "/")
    kit.wait(driver, lambda d: d.find_element(By.ID, "app").is_displayed(), "the page again")
    banner = kit.wait(driver, lambda d: (b := d.find_element(By.ID, "resume-banner")) and b.is_displayed() and b, "the resume offer")
    kit.shot(driver, "resume-offer-1280x800")
    driver.find_element(By.ID, "resume-accept").click()
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == tracks[1]["id"], "the resumed track")
    state = player_state(kit, driver)
    queued = kit.js(driver, "return window.shelf.player.queue.map(t => t.id)")
    assert queued == [t["id"] for t in tracks], queued
    assert not state["playing"], "resumed playing; it should wait for the listener"
    assert state["position"] >= 0.3, state
    assert kit.js(driver, "const b = document.getElementById('resume-banner'); return !b || b.hidden || !b.isConnected || b.getClientRects().length === 0")
    stop_playing(kit, driver)


def test_stream_only_player(kit, driver, tracks):
    """The signed-in admin may download, so the player fetches files; for a user who may only
    stream (the server sends them Opus), it names the format, so a seek asks for a new start
    (`timeOffset`) instead of a byte range the transcode cannot serve."""
    assert kit.js(driver, "return window.shelf.player.streamOnly") is False
    urls = kit.js(driver, """
        const p = window.shelf.player, t = {id: arguments[0]}, chosen = p.el.transcode.value;
        p.el.transcode.value = '';
        const plain = p.streamURL(t, 0);
        p.streamOnly = true;
        const urls = [plain, p.streamURL(t, 0), p.streamURL(t, 12)];
        p.streamOnly = false;
        p.el.transcode.value = chosen;
        return urls;
    """, tracks[0]["id"])
    assert "format=" not in urls[0], urls
    assert "format=opus" in urls[1] and "timeOffset" not in urls[1], urls
    assert "format=opus" in urls[2] and "timeOffset=12.0" in urls[2], urls


def accept_confirm(kit, driver):
    """Accepts the page's window.confirm()."""
    from selenium.webdriver.support import expected_conditions
    kit.wait(driver, lambda d: expected_conditions.alert_is_present()(d), "the confirmation")
    driver.switch_to.alert.accept()


def row_texts(kit, driver, selector):
    """The text of every element matching `selector`, read in one go (rows redraw as they change)."""
    return kit.js(driver, "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", selector)


CLICK_IN_ROW = """
const [selector, rowText, control] = arguments;
const find = (row) => control.startsWith('css:') ? row.querySelector(control.slice(4))
    : [...row.querySelectorAll('button')].find(b => b.textContent.trim() === control);
const row = [...document.querySelectorAll(selector)].find(r => r.textContent.includes(rowText) && find(r));
if (!row) return false;
// After this script returns: a click that asks window.confirm() must not block the driver's call.
const target = find(row);
setTimeout(() => target.click(), 0);
return true;
"""


def click_in_row(kit, driver, selector, row_text, control):
    """Clicks, in one step, the button named `control` (or `css:SELECTOR`) of the row matching
    `selector` that contains `row_text`, waiting until there is one (tables redraw as they change)."""
    kit.wait(driver, lambda d: kit.js(d, CLICK_IN_ROW, selector, row_text, control), f"'{control}' in the row of {row_text}")


def button_named(root, text):
    """The button in `root` whose text is `text`."""
    found = [b for b in root.find_elements(By.TAG_NAME, "button") if b.text.strip() == text and b.is_displayed()]
    assert found, f"no button '{text}'"
    return found[0]


def test_share_a_selection(kit, driver):
    """A share made from the list's selection opens as its public page; revoked, it is gone."""
    kit.show_tracks(driver)
    kit.click_row(driver, 0)
    kit.wait(driver, lambda d: d.find_element(By.ID, "share-selection").is_enabled(), "the share button")
    driver.find_element(By.ID, "share-selection").click()
    dialog = kit.wait(driver, lambda d: (x := d.find_element(By.ID, "share-dialog")) and x.is_displayed() and x, "the share dialog")
    dialog.find_element(By.NAME, "description").send_keys("For a friend")
    kit.shot(driver, "share-dialog-1280x800")
    dialog.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    link = kit.wait(driver, lambda d: [v for i in d.find_elements(By.CSS_SELECTOR, "#share-dialog input.copy-input") if "/share/" in (v := i.get_attribute("value") or "")], "the share link")[0]
    with urllib.request.urlopen(link) as answer:
        assert answer.status == 200 and "For a friend" in answer.read().decode()
    button_named(dialog, "Close").click()
    open_view(kit, driver, "shares")
    kit.wait(driver, lambda d: [r for r in row_texts(kit, d, "#page-view tr") if "For a friend" in r], "the share listed")
    kit.shot(driver, "shares-1280x800")
    click_in_row(kit, driver, "#page-view tr", "For a friend", "Revoke")
    accept_confirm(kit, driver)
    kit.wait(driver, lambda d: not [r for r in row_texts(kit, d, "#page-view tr") if "For a friend" in r], "the share gone from the list")
    try:
        urllib.request.urlopen(link)
        raise AssertionError("a revoked share still opens")
    except urllib.error.HTTPError as error:
        assert error.code in (404, 410), error.code


def shelf_json(kit, *arguments):
    result = subprocess.run([kit.SHELF, "--library", kit.LIBRARY, *arguments, "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_admin(kit, driver):
    """Admin: a user added (and seen by `shelf user list`), made admin, given an API key shown
    once that then signs in, the key revoked; a scan and a loudness run started; a backup taken
    into the server's backup-dir and listed; statistics."""
    open_view(kit, driver, "admin")
    page = driver.find_element(By.ID, "page-view")
    form = page.find_element(By.CSS_SELECTOR, "form[aria-labelledby='admin-add-user-title']")
    form.find_element(By.NAME, "username").send_keys("dora")
    form.find_element(By.NAME, "password").send_keys("dora-pass-1")
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    kit.wait(driver, lambda d: [r for r in row_texts(kit, d, "#page-view .users-table tr") if "dora" in r], "dora listed")
    users = shelf_json(kit, "user", "list")
    users = users.get("users", users) if isinstance(users, dict) else users
    dora = [u for u in users if u["name"] == "dora"]
    assert dora and not dora[0].get("admin", dora[0].get("isAdmin")), users
    click_in_row(kit, driver, "#page-view .users-table tr", "dora", "css:input[type='checkbox']")
    kit.wait(driver, lambda d: any(u["name"] == "dora" and u.get("admin", u.get("isAdmin")) for u in
                                   (lambda x: x.get("users", x) if isinstance(x, dict) else x)(shelf_json(kit, "user", "list"))), "dora made admin")
    kit.wait(driver, lambda d: kit.js(d, "return [...document.querySelectorAll('#page-view .users-table tr')].some(r => r.textContent.includes('dora') && r.querySelector('input[type=checkbox]').checked)"), "dora shown as admin")
    click_in_row(kit, driver, "#page-view .users-table tr", "dora", "Access keys")
    dialog = kit.wait(driver, lambda d: (x := d.find_element(By.ID, "admin-keys-dialog")) and x.is_displayed() and x, "the keys dialog")
    button_named(dialog, "Create key").click()
    key = kit.wait(driver, lambda d: [v for i in d.find_elements(By.CSS_SELECTOR, "#admin-keys-dialog input.copy-input") if (v := i.get_attribute("value"))], "the new key")[0]
    kit.shot(driver, "admin-key-1280x800")
    request = urllib.request.Request(kit.BASE + "/api/me", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request) as answer:
        assert json.loads(answer.read())["user"]["name"] == "dora"
    click_in_row(kit, driver, "#admin-keys-dialog tr", "", "Revoke")
    accept_confirm(kit, driver)
    kit.wait(driver, lambda d: "Revoke" not in row_texts(kit, d, "#admin-keys-dialog button"), "the key revoked")
    try:
        urllib.request.urlopen(request)
        raise AssertionError("a revoked key still signs in")
    except urllib.error.HTTPError as error:
        assert error.code == 401, error.code
    button_named(dialog, "Close").click()
    # The key is shown once: opening the dialog again shows no key.
    click_in_row(kit, driver, "#page-view .users-table tr", "dora", "Access keys")
    assert not [i for i in driver.find_elements(By.CSS_SELECTOR, "#admin-keys-dialog input.copy-input") if i.is_displayed()]
    button_named(driver.find_element(By.ID, "admin-keys-dialog"), "Close").click()
    # A scan of the music folders, its progress from the events, then the loudness job.
    button_named(page, "Scan music folders").click()
    kit.wait(driver, lambda d: kit.api(d, "/api/import")["state"] in ("running", "finished"), "the scan started")
    kit.wait(driver, lambda d: kit.api(d, "/api/import")["state"] == "finished", "the scan finished")
    kit.wait(driver, lambda d: "running" not in (kit.js(d, "return document.querySelector('#page-view .scan-report').textContent").lower()), "the report shown")
    button_named(page, "Measure now").click()
    kit.wait(driver, lambda d: (l := kit.api(d, "/api/loudness")).get("last") is not None and not l["running"], "the loudness run", timeout=kit.JOB_WAIT)
    # Backups: the server's backup-dir is shown, and "Back up now" adds a row to the list.
    backups = "#page-view section[aria-labelledby='admin-backups-title']"
    before = kit.api(driver, "/api/backups")
    assert before["directory"], before
    kit.wait(driver, lambda d: before["directory"] in kit.js(d, "return document.querySelector(arguments[0]).textContent", backups), "the backup folder shown")
    button_named(driver.find_element(By.CSS_SELECTOR, backups), "Back up now").click()
    kit.wait(driver, lambda d: len(kit.api(d, "/api/backups")["backups"]) > len(before["backups"]), "the backup taken")
    after = kit.api(driver, "/api/backups")
    assert after["lastError"] is None, after
    newest = after["backups"][0]["name"]
    kit.wait(driver, lambda d: (rows := row_texts(kit, d, backups + " tbody tr")) and len(rows) == len(after["backups"]) and newest in rows[0],
             "the new backup listed first")
    total = kit.api(driver, "/api/info")["trackCount"]
    stats = lambda d: kit.js(d, "return document.querySelector(\"#page-view section[aria-labelledby='admin-stats-title'] .facts\").textContent")
    kit.wait(driver, lambda d: f"{total:,}" in stats(d), f"{total} tracks in the statistics")
    kit.shot(driver, "admin-1280x800")


def test_settings(kit, driver):
    """Settings: the theme chosen sticks over a reload, playback settings reach the player, and
    signing out everywhere else ends another session but not this one."""
    other = urllib.request.Request(kit.BASE + "/api/session", data=json.dumps({"name": kit.USER, "password": kit.PASSWORD}).encode(),
                                   headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(other) as answer:
        cookie = answer.headers["Set-Cookie"].split(";")[0]
    open_view(kit, driver, "settings")
    page = driver.find_element(By.ID, "page-view")
    page.find_element(By.CSS_SELECTOR, "input[name='theme'][value='dark']").click()
    kit.wait(driver, lambda d: kit.js(d, "return document.documentElement.dataset.theme") == "dark", "the dark theme")
    kit.shot(driver, "settings-dark-1280x800")
    select = page.find_element(By.NAME, "replayGain")
    from selenium.webdriver.support.ui import Select
    Select(select).select_by_value("album")
    kit.wait(driver, lambda d: kit.js(d, "return window.shelf.player.settings().replayGain") == "album", "the player's ReplayGain mode")
    button_named(page, "Sign out everywhere else").click()
    kit.wait(driver, lambda d: "other session" in d.find_element(By.ID, "page-view").text, "the sessions ended")
    try:
        urllib.request.urlopen(urllib.request.Request(kit.BASE + "/api/me", headers={"Cookie": cookie}))
        raise AssertionError("the other session still works")
    except urllib.error.HTTPError as error:
        assert error.code == 401, error.code
    assert kit.api(driver, "/api/me")["user"]["name"] == kit.USER
    driver.get(kit.BASE + "/")
    kit.wait(driver, lambda d: d.find_element(By.ID, "app").is_displayed(), "the page again")
    assert kit.js(driver, "return document.documentElement.dataset.theme") == "dark"
    open_view(kit, driver, "settings")
    driver.find_element(By.CSS_SELECTOR, "#page-view input[name='theme'][value='auto']").click()
    Select(driver.find_element(By.CSS_SELECTOR, "#page-view select[name='replayGain']")).select_by_value("auto")
    kit.wait(driver, lambda d: kit.js(d, "return document.documentElement.dataset.theme === undefined"), "the system theme")


def test_library_views(kit, driver, tracks):
    """The artist page groups its albums by release type and links back; the album page shows
    the disc and credits with each artist a link; the missing, podcast, radio and bookmark views."""
    artist_id = kit.api(driver, "/api/artists/named?name=" + urllib.request.quote("Tone Maker"))["id"]
    kit.js(driver, "window.shelf.openArtist(arguments[0], 'Tone Maker')", str(artist_id))
    kit.wait(driver, lambda d: kit.js(d, "const p = document.getElementById('page-view'); return p.dataset.view === 'artist' && p.dataset.ready === 'true'"), "the artist page")
    group = kit.wait(driver, lambda d: d.find_elements(By.ID, "artist-group-albums"), "the albums group")
    kit.shot(driver, "artist-1280x800")
    tile = [b for b in driver.find_elements(By.CSS_SELECTOR, "#page-view button") if "Gapless Tone" in b.text]
    assert tile, "the album is not on its artist's page"
    tile[0].click()
    kit.wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#album-tracks li.album-track")) == 3, "the album's tracks")
    links = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "#album-tracks .track-artists button")]
    assert links[:1] == ["Tone Maker"], links
    kit.shot(driver, "album-1280x800")
    # A bookmark made through the API is listed and resumes at its place.
    kit.js_async(driver, "const done = arguments[arguments.length - 1]; fetch('/rest/createBookmark', {method: 'POST', headers: {'X-Shelf-Request': '1', 'Content-Type': 'application/x-www-form-urlencoded'}, body: `f=json&id=tr-${arguments[0]}&position=1200&comment=halfway`}).then(r => r.json()).then(done);", tracks[2]["id"])
    open_view(kit, driver, "bookmarks")
    click_in_row(kit, driver, "#page-view tr", "Tone 3", "Resume")
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == tracks[2]["id"] and s["position"] >= 1.1, "resumed at the bookmark")
    stop_playing(kit, driver)
    for view in ("missing", "podcasts", "radio"):
        open_view(kit, driver, view)
        kit.shot(driver, f"{view}-1280x800")


def test_folders_and_libraries(kit, driver, tracks):
    """The Folders view walks from the roots to the tone album's folder and plays it; a second
    library shows the switcher, whose choice narrows the list and is kept for the next visit."""
    open_view(kit, driver, "folders")
    # Down from the roots, always into the folder that holds the tones (one step per level).
    tone_path = tracks[0]["path"]
    for _ in range(12):
        buttons = driver.find_elements(By.CSS_SELECTOR, "#page-view .folder-list button")
        wanted = [b for b in buttons if "/" + b.text.rstrip("/") + "/" in tone_path]
        if not wanted:
            break
        wanted[0].click()
        # show() empties the page at once; a folder's contents (or "nothing here") follow its answer.
        kit.wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#page-view .folder-list, #page-view table, #page-view .page-empty"), "the folder")
        kit.wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#page-view .breadcrumbs [aria-current]"), "the breadcrumbs")
    kit.wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#page-view table tr")) >= len(tracks), "the tones' folder")
    kit.shot(driver, "folders-1280x800")
    play = [b for b in driver.find_elements(By.CSS_SELECTOR, "#page-view .page-toolbar button") if b.get_attribute("class") == "primary"]
    assert play, "no play-folder button"
    play[0].click()
    first = sorted(tracks, key=lambda t: t["path"])[0]
    kit.wait(driver, lambda d: (s := player_state(kit, d)) and s["track"] == first["id"], "the folder playing from its first file")
    stop_playing(kit, driver)
    # A second library (empty): the switcher appears after the next sign-in's page load.
    extra = tempfile.mkdtemp(prefix="shelf-extra-")
    done = subprocess.run([kit.SHELF, "--library", kit.LIBRARY, "library", "add", "Extra", extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    driver.refresh()
    switcher = kit.wait(driver, lambda d: [e for e in d.find_elements(By.ID, "library") if e.is_displayed()], "the library switcher")[0]
    count = lambda d: kit.js(d, "return document.getElementById('list-count').textContent")  # noqa: E731
    kit.wait(driver, lambda d: re.sub(r"\D", "", count(d)) not in ("", "0"), "every library's count")
    everything = count(driver)
    Select(switcher).select_by_visible_text("Extra")
    kit.wait(driver, lambda d: count(d) != everything and re.sub(r"\D", "", count(d)) in ("", "0"), "the empty library's list")
    # Remembered for the next visit (the page reads it back before its first rows).
    remembered = kit.js(driver, "return localStorage.getItem('shelf.library.' + arguments[0])", kit.USER)
    assert remembered == Select(switcher).first_selected_option.get_attribute("value") and remembered, remembered
    Select(switcher).select_by_value("")
    kit.wait(driver, lambda d: count(d) == everything, "every library's list again")
    done = subprocess.run([kit.SHELF, "--library", kit.LIBRARY, "library", "remove", "Extra"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_listening(kit, driver, tracks):
    """The listening view: plays counted through the API (and the player's own earlier ones) show
    as bars on their days, in the tops and in the log; the settings' scrobbling section says
    nothing is linked, and that Last.fm waits for the operator's key."""
    now = int(time.time())
    for n, track in enumerate(tracks[:3]):
        for day in range(n + 1):
            done = kit.js_async(driver, "const done = arguments[arguments.length - 1]; fetch(arguments[0], {method: 'POST', headers: {'X-Shelf-Request': '1'}}).then(r => done(r.status));",
                                f"api/tracks/{track['id']}/scrobble?time={now - 86400 * day - 60}")
            assert done == 200, done
    stats = kit.api(driver, "/api/me/stats?period=month")
    assert stats["plays"] >= 6 and tracks[2]["id"] in [t["track"] for t in stats["tracks"]], stats
    open_view(kit, driver, "listening")
    page = driver.find_element(By.ID, "page-view")
    kit.wait(driver, lambda d: page.find_elements(By.CSS_SELECTOR, ".listening-chart rect.bar"), "the chart")
    kit.wait(driver, lambda d: len(page.find_elements(By.CSS_SELECTOR, ".listens-table tbody tr")) >= 6, "the log")
    bars = kit.js(driver, "return [...document.querySelectorAll('#page-view .listening-chart rect.bar')].map(b => Number(b.dataset.plays))")
    assert len(bars) == 31 and sum(bars) == stats["plays"], bars
    tops = [e.text for e in page.find_elements(By.CSS_SELECTOR, ".listening-top.tracks li .name")]
    assert tops == [t["name"] for t in stats["tracks"]], tops
    kit.shot(driver, "listening-1280x800")
    page.find_element(By.CSS_SELECTOR, "button[data-period='week']").click()
    kit.wait(driver, lambda d: kit.js(d, "return document.querySelectorAll('#page-view .listening-chart rect.bar').length") == 8, "a week of bars")
    open_view(kit, driver, "settings")
    services = kit.wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#page-view .scrobbling-service[data-state='none']"), "the scrobbling section")
    assert len(services) == 2, [s.text for s in services]
    text = driver.find_element(By.CSS_SELECTOR, "#page-view .scrobbling-service[data-service='lastfm']").text
    assert "operator has not set" in text, text


def seed_sonic_features(kit):
    """Feature vectors for every track, written as `shelf analyze` stores them (57 little-endian
    floats under the track's audio identity): the tones are too short to analyse, and the page's
    mixes are what this checks. Two families: the tone album and everything else."""
    import sqlite3
    import struct

    with sqlite3.connect(os.path.join(kit.LIBRARY, "library.sqlite")) as db:
        rows = db.execute("SELECT id, coalesce(audio_hash, 'path:' || path), album FROM track").fetchall()
        for track_id, key, album in rows:
            tone = album == "Gapless Tone"
            values = [0.0] * 57
            values[0] = (120.0 if tone else 90.0) + track_id % 3
            values[1], values[2], values[3] = 0.8, 2.0 + track_id % 2, 0.05
            values[5], values[7], values[9] = (440.0 if tone else 1500.0) + track_id, 300.0, 900.0 + track_id
            values[11], values[13], values[14], values[15] = 0.01, -20.0 - track_id % 4, 1.0, 3.0
            for k in range(16, 42):
                values[k] = (k - 20) * (1.0 if tone else -1.0) + (track_id % 5) * 0.1
            for k in range(42, 54):
                values[k] = 1.0 if (k - 42) == (9 if tone else 0) else 0.1
            values[54], values[55], values[56] = (9.0 if tone else 0.0), (0.0 if tone else 1.0), 0.6
            db.execute("INSERT OR REPLACE INTO sonic (audio, version, status, seconds, features, analyzed) VALUES (?, 1, 'ok', 2, ?, 0)",
                       (key, struct.pack("<57f", *values)))


def test_instant_mix(kit, driver, tracks):
    """Instant mix from a selected tone: the queue fills with its neighbours, each with its why
    line, and the first is the tone itself; Path to… between two selected tracks starts with the
    first and ends with the second; the album page has its own Instant mix."""
    seed_sonic_features(kit)
    kit.show_tracks(driver)
    stop_playing(kit, driver)
    kit.click_row(driver, 0)
    kit.wait(driver, lambda d: d.find_element(By.ID, "mix-selection").is_enabled(), "the Instant mix button")
    assert not driver.find_element(By.ID, "path-selection").is_enabled()
    first = int(driver.find_element(By.CSS_SELECTOR, '.rows .row[data-index="0"]').get_attribute("data-id"))
    driver.find_element(By.ID, "mix-selection").click()
    kit.wait(driver, lambda d: kit.js(d, "return window.shelf.player.queue.length") >= 3, "the mix in the queue")
    queue = kit.js(driver, "return window.shelf.player.queue.map(t => ({id: t.id, why: t.why || ''}))")
    assert queue[0]["id"] == first and all(entry["why"] for entry in queue[1:]), queue
    whys = row_texts(kit, driver, ".queue-list .why")
    assert whys and all(whys), whys
    kit.js(driver, "const q = document.getElementById('queue'); if (q.hidden) document.getElementById('queue-toggle').click();")
    kit.shot(driver, "instant-mix-1280x800")
    kit.js(driver, "const q = document.getElementById('queue'); if (!q.hidden) document.getElementById('queue-toggle').click();")
    kit.click_row(driver, 1, Keys.CONTROL)
    kit.wait(driver, lambda d: d.find_element(By.ID, "path-selection").is_enabled(), "Path to… for two selected")
    second = int(driver.find_element(By.CSS_SELECTOR, '.rows .row[data-index="1"]').get_attribute("data-id"))
    driver.find_element(By.ID, "path-selection").click()
    kit.wait(driver, lambda d: kit.js(d, "const q = window.shelf.player.queue; return q.length >= 2 && q[q.length - 1].id === arguments[0]", second),
             "the path in the queue")
    assert kit.js(driver, "return window.shelf.player.queue[0].id") == first
    stop_playing(kit, driver)


def open_view(kit, driver, view):
    kit.js(driver, "document.querySelector(`[data-view=\"${arguments[0]}\"]`).click()", view)
    kit.wait(driver, lambda d: kit.js(d, "const p = document.getElementById('page-view'); return !p.hidden && p.dataset.view === arguments[0] && p.dataset.ready === 'true'", view), f"the {view} page")


# MARK: Language

UNTRANSLATED = """
const allowed = new Set(Object.values(arguments[0]).join(' ').match(/[A-Za-z]{3,}/g) || []);
const found = [];
const visible = (el) => el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
const skipped = (el) => el.closest('[translate="no"]');
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const el = node.parentElement;
  if (!el || skipped(el) || !visible(el) || ['SCRIPT', 'STYLE'].includes(el.tagName)) continue;
  for (const word of node.textContent.match(/[A-Za-z]{3,}/g) || []) if (!allowed.has(word)) found.push(`${word} in <${el.tagName.toLowerCase()} id=${el.id} class=${el.className}>`);
}
for (const el of document.querySelectorAll('[aria-label], [title], [placeholder], [alt]')) {
  if (skipped(el) || !visible(el)) continue;
  for (const name of ['aria-label', 'title', 'placeholder', 'alt']) {
    for (const word of (el.getAttribute(name) || '').match(/[A-Za-z]{3,}/g) || []) if (!allowed.has(word)) found.push(`${word} in ${name} of <${el.tagName.toLowerCase()} id=${el.id}>`);
  }
}
return found;
"""


def ja_table(kit, driver):
    return kit.js_async(driver, "const done = arguments[arguments.length - 1]; import('/app/i18n.js').then(m => done(m.strings('ja')), e => done(String(e)));")


def untranslated(kit, driver, table):
    return kit.js(driver, UNTRANSLATED, table)


VIEWS = ["tracks", "albums", "artists", "listening", "bookmarks", "podcasts", "radio", "shares", "missing", "admin", "settings"]
PAGE_VIEWS = {"listening", "bookmarks", "podcasts", "radio", "shares", "missing", "admin", "settings"}


def show_view(kit, driver, view):
    """Opens a view from the sidebar and waits until it has drawn."""
    if view == "tracks":
        kit.show_tracks(driver)
    elif view == "albums":
        kit.show_albums(driver)
    elif view in ("artists", "composers", "genres"):
        kit.js(driver, "document.querySelector(`[data-view=\"${arguments[0]}\"]`).click()", view)
        kit.wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#groups-layer .tile[data-id]"), f"the {view} grid")
    elif view == "album":
        kit.show_album(driver)
    else:
        open_view(kit, driver, view)


def set_language(kit, driver, lang):
    kit.js(driver, "localStorage.setItem('shelf.lang', arguments[0])", lang)
    driver.get(kit.BASE + "/")
    kit.wait(driver, lambda d: d.find_element(By.ID, "app").is_displayed(), "the page")
    kit.wait(driver, lambda d: kit.js(d, "return document.documentElement.lang") == lang, f"the page in {lang}")


def test_japanese(kit, driver):
    """In Japanese every view's own words come from the Japanese table: no Latin word outside
    library data (translate="no") unless the table itself uses it; numbers and dates too."""
    set_language(kit, driver, "ja")
    table = ja_table(kit, driver)
    assert isinstance(table, dict) and table, table
    problems = {}
    for view in VIEWS + ["album"]:
        show_view(kit, driver, view)
        found = untranslated(kit, driver, table)
        if found:
            problems[view] = sorted(set(found))[:8]
        kit.shot(driver, f"ja-{view}-1280x800")
    # The dialogs too: shortcuts help and the smart playlist dialog.
    kit.js(driver, "document.getElementById('new-smart').click()")
    found = untranslated(kit, driver, table)
    if found:
        problems["smart dialog"] = sorted(set(found))[:8]
    kit.js(driver, "document.getElementById('smart-dialog').close()")
    # The dark theme in Japanese, for the README.
    kit.js(driver, "document.documentElement.dataset.theme = 'dark'")
    for view in ("albums", "admin", "settings"):
        show_view(kit, driver, view)
        kit.shot(driver, f"ja-{view}-dark-1280x800")
    kit.js(driver, "delete document.documentElement.dataset.theme")
    assert "トラック" in driver.find_element(By.CSS_SELECTOR, "[data-view='tracks']").text or "曲" in driver.find_element(By.CSS_SELECTOR, "[data-view='tracks']").text
    assert not problems, json.dumps(problems, ensure_ascii=False)
    set_language(kit, driver, "en")
    assert driver.find_element(By.CSS_SELECTOR, "[data-view='tracks']").text == "Tracks"


# MARK: Offline shell

def test_offline_shell(kit, driver):
    """The service worker keeps the page's own files: with the network gone the shell still
    opens (the sign-in form or the app, with the API failing), and online again it is current."""
    driver.get(kit.BASE + "/")
    kit.wait(driver, lambda d: kit.js_async(d, "const done = arguments[arguments.length - 1]; navigator.serviceWorker.ready.then(() => done(Boolean(navigator.serviceWorker.controller)), () => done(false));"),
             "the service worker in control")
    cached = kit.js_async(driver, "const done = arguments[arguments.length - 1]; caches.keys().then(async (names) => { const c = await caches.open(names.find(n => n.startsWith('shelf-shell-'))); done((await c.keys()).map(r => new URL(r.url).pathname)); });")
    assert "/" in cached and "/app/app.js" in cached and not any(p.startswith("/api/") or p.startswith("/rest/") for p in cached), cached
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    try:
        driver.get(kit.BASE + "/")
        kit.wait(driver, lambda d: d.find_element(By.ID, "signin").is_displayed() or d.find_element(By.ID, "app").is_displayed(), "the shell offline")
        assert kit.js(driver, "return typeof customElements !== 'undefined' && document.querySelector('link[rel=stylesheet]') && getComputedStyle(document.body).margin") == "0px", "the style sheet did not load offline"
        kit.shot(driver, "offline-1280x800")
        # Nothing of the library is cached: the API fails offline.
        status = kit.js_async(driver, "const done = arguments[arguments.length - 1]; fetch('/api/me').then(r => done(r.status), () => done('failed'));")
        assert status == "failed", status
    finally:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    driver.get(kit.BASE + "/")
    kit.wait(driver, lambda d: d.find_element(By.ID, "app").is_displayed(), "the page online again")


# MARK: Accessibility

AXE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".venv", "axe", "axe.min.js")


def axe_violations(kit, driver):
    if not kit.js(driver, "return typeof window.axe !== 'undefined'"):
        with open(AXE, encoding="utf-8") as source:
            kit.js(driver, source.read())
    result = kit.js_async(driver, """
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact,
            nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))), e => done([{id: 'axe failed', impact: 'critical', nodes: [String(e)]}]));
    """)
    return result


def test_axe(kit, driver):
    """axe-core 4.x on every view, dialog and both themes: no serious or critical violation."""
    if not os.path.exists(AXE):
        print("skip axe: no .venv/axe/axe.min.js (make subsonic-client fetches it)", flush=True)
        return
    serious = {}
    moderate = set()

    def scan(name):
        for violation in axe_violations(kit, driver):
            if violation["impact"] in ("serious", "critical"):
                serious.setdefault(name, []).append(violation)
            else:
                moderate.add(f"{violation['id']} ({name})")

    for theme in ("light", "dark"):
        kit.js(driver, "localStorage.setItem('shelf.theme', arguments[0]); document.documentElement.dataset.theme = arguments[0];", theme)
        for view in VIEWS + ["album"]:
            show_view(kit, driver, view)
            scan(f"{view}/{theme}")
            kit.shot(driver, f"{view}-{theme}-1280x800")
        kit.show_tracks(driver)
        kit.js(driver, "const q = document.getElementById('queue'); if (q.hidden) document.getElementById('queue-toggle').click();")
        scan(f"queue/{theme}")
        kit.js(driver, "document.getElementById('queue-toggle').click()")
        kit.js(driver, "document.getElementById('lyrics-toggle').click()")
        scan(f"lyrics/{theme}")
        kit.js(driver, "document.getElementById('lyrics-toggle').click()")
        for opener, dialog in (("document.getElementById('new-smart').click()", "smart-dialog"),
                               ("window.shelf.showShortcuts()", "shortcuts-dialog")):
            kit.js(driver, opener)
            kit.wait(driver, lambda d: kit.js(d, "return document.getElementById(arguments[0]).open", dialog), dialog)
            scan(f"{dialog}/{theme}")
            kit.js(driver, "document.getElementById(arguments[0]).close()", dialog)
        kit.click_row(driver, 0)
        kit.js(driver, "document.getElementById('edit-selection').click()")
        kit.wait(driver, lambda d: kit.js(d, "return document.getElementById('edit-dialog').open"), "the edit dialog")
        scan(f"edit-dialog/{theme}")
        kit.js(driver, "document.getElementById('edit-dialog').close()")
    kit.js(driver, "localStorage.removeItem('shelf.theme'); delete document.documentElement.dataset.theme;")
    # The sign-in page: its own document.
    kit.js_async(driver, "const done = arguments[arguments.length - 1]; fetch('/api/session', {method: 'DELETE', headers: {'X-Shelf-Request': '1'}}).then(() => done(true));")
    driver.get(kit.BASE + "/")
    kit.wait(driver, lambda d: d.find_element(By.ID, "signin").is_displayed(), "the sign-in form")
    scan("signin")
    kit.sign_in_again(driver)
    if moderate:
        print(f"     axe, moderate or minor: {', '.join(sorted(moderate))}", flush=True)
    assert not serious, json.dumps(serious)


# MARK: Keyboard

def test_keyboard_walk(kit, driver):
    """Tab from the top reaches every control of the tracks view in reading order (top bar, sidebar,
    list, player) with a visible focus ring, and never gets stuck."""
    kit.show_tracks(driver)
    # From the first tab stop of the page in document order.
    kit.js(driver, """
        const stops = [...document.querySelectorAll('#app button, #app input, #app select, #app [tabindex]')]
            .filter(el => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0);
        stops[0].focus();
    """)
    seen = []
    for _ in range(120):
        info = kit.js(driver, """
            const el = document.activeElement;
            if (!el || el === document.body) return null;
            const style = getComputedStyle(el);
            const area = el.closest('header, nav, main, footer, aside');
            return {key: el.id || el.dataset.view || el.getAttribute('aria-label') || el.textContent.trim().slice(0, 20),
                    region: area ? (area.id || area.tagName.toLowerCase()) : 'none',
                    ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0 || style.boxShadow !== 'none'};
        """)
        if info is None:
            break
        if seen and info["key"] == seen[0]["key"]:
            break
        seen.append(info)
        driver.switch_to.active_element.send_keys(Keys.TAB)
    keys = [s["key"] for s in seen]
    for wanted in ("search", "signout", "tracks", "albums", "settings", "grid", "play", "next", "seek", "volume", "lyrics-toggle", "queue-toggle"):
        assert wanted in keys, f"{wanted} is never reached by Tab: {keys}"
    order = [s["region"] for s in seen]
    regions = [r for i, r in enumerate(order) if i == 0 or order[i - 1] != r]
    assert regions.index("sidebar") < regions.index("main") if "sidebar" in regions and "main" in regions else True, regions
    unringed = [s["key"] for s in seen if not s["ring"]]
    assert not unringed, f"no visible focus on {unringed}"
    print(f"     {len(seen)} stops: {' → '.join(dict.fromkeys(regions))}", flush=True)


# MARK: Phone

def test_phone_screens(kit, driver):
    """Every view at 390×844, saved for a look; nothing wider than the screen."""
    kit.viewport(driver, 390, 844)
    try:
        wide = {}
        for view in VIEWS + ["album"]:
            show_view(kit, driver, view)
            kit.shot(driver, f"phone-{view}-390x844")
            overflow = kit.js(driver, "return document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 1:
                wide[view] = overflow
        kit.js(driver, "document.getElementById('lyrics-toggle').click()")
        kit.shot(driver, "phone-lyrics-390x844")
        kit.js(driver, "document.getElementById('lyrics-toggle').click()")
        assert not wide, f"wider than the screen: {wide}"
    finally:
        kit.viewport(driver, 1280, 800)

"""The web page in a real browser: headless Chromium (Debian's chromium and chromium-driver)
driven by Selenium (from PyPI, in the project's .venv) against a real `shelf serve`.

    web_page_test.py SUITE BASE USER PASSWORD LIBRARY SHELF ARTIFACTS [IMPORT_DIR]

SUITE is `big` (a generated library: first rows, jumps, the end of the list, sorting, search,
filter errors, DOM nodes and heap while scrolling the whole list, keyboard), `sample` (real audio
files: playing and the queue, editing, an import from the command line while the page is open,
keyboard play, screenshots) or `proxy` (BASE is a reverse proxy's sub-path: sign in, the first
rows, play and the next track, the service worker's scope). Every wait is on a DOM condition (WebDriverWait), never a sleep.
Prints one line per check and exits 1 if any failed.
"""

import json
import os
import subprocess
import sys
import traceback
from urllib.parse import quote

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import web_checks

SUITE, BASE, USER, PASSWORD, LIBRARY, SHELF, ARTIFACTS = sys.argv[1:8]
IMPORT_DIR = sys.argv[8] if len(sys.argv) > 8 else None
WAIT = 90  # a bound for a hung page, not a synchronization
# A bound for a background job that does real work at low priority (the loudness run decodes every
# track through a niced ffmpeg): on a loaded machine it is starved for minutes, and that is no defect.
JOB_WAIT = 900

failures = []


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("SHELF_CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800",
                     "--autoplay-policy=no-user-gesture-required", "--lang=en-US", "--js-flags=--expose-gc"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=os.environ.get("SHELF_CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_script_timeout(WAIT)
    driver.execute_cdp_cmd("Performance.enable", {})
    return driver


def viewport(driver, width, height):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def wait(driver, condition, message, timeout=WAIT):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))
    except TimeoutException:
        raise AssertionError(f"timed out waiting for {message}")


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def js_async(driver, script, *args):
    """An asynchronous script: its last argument is the callback it answers through."""
    return driver.execute_async_script(script, *args)


def api(driver, path):
    """GET `path` (`/api/…`) from inside the page (with its session cookie), relative to the page as
    the page itself asks, so it works under a proxy's base path too; the parsed JSON."""
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0]).then(r => r.text().then(t => done({status: r.status, text: t}))).catch(e => done({status: 0, text: String(e)}));",
        path.lstrip("/"))
    if result["status"] != 200:
        raise AssertionError(f"{path}: {result['status']} {result['text']}")
    return json.loads(result["text"])


# For working on the page: SHELF_WEB_ONLY="lyrics,axe" runs sign-in, the tone album and the
# checks whose names contain one of the words; unset (as in make test), every check runs.
ONLY = [word for word in os.environ.get("SHELF_WEB_ONLY", "").split(",") if word]


def check(name, body, driver):
    if "sign in" in failures:
        print(f"skip {name}: not signed in", flush=True)
        return
    if ONLY and name not in ("sign in", "a tone album imported") and not any(word in name for word in ONLY):
        return
    try:
        body(driver)
        print(f"ok   {name}", flush=True)
    except Exception as error:  # noqa: BLE001 (a check's failure of any kind is reported, and the rest still run)
        failures.append(name)
        print(f"FAIL {name}: {str(error).splitlines()[0] if str(error) else type(error).__name__}", flush=True)
        frames = traceback.extract_tb(error.__traceback__)
        ours = [frame for frame in frames if "/Tests/" in frame.filename][-3:]
        print("".join(traceback.format_list(ours + [frame for frame in frames[-1:] if frame not in ours])), flush=True)
        shot(driver, f"failed-{name.replace(' ', '-')}")
        # A failed check may leave a modal dialog open, which would make the rest of the page inert.
        try:
            driver.switch_to.alert.dismiss()
        except Exception:  # noqa: BLE001 (no alert is the usual case)
            pass
        js(driver, "document.querySelectorAll('dialog[open]').forEach(d => d.close())")


def shot(driver, name):
    os.makedirs(ARTIFACTS, exist_ok=True)
    driver.save_screenshot(os.path.join(ARTIFACTS, f"{name}.png"))


def grid_state(driver):
    return js(driver, """
        const g = document.getElementById('grid');
        const first = Number(g.dataset.first);
        const row = document.querySelector(`.rows .row[data-index="${first}"]`);
        return {first, offset: Number(g.dataset.offset), waiting: Number(g.dataset.waiting),
                rowcount: Number(g.getAttribute('aria-rowcount')), id: row && row.dataset.id ? Number(row.dataset.id) : null,
                active: g.getAttribute('aria-activedescendant'), focused: document.activeElement === g};
    """)


def settled(driver):
    """The rows in view are all painted (no placeholder waits for its page)."""
    state = grid_state(driver)
    return state if state["waiting"] == 0 and state["id"] is not None else None


def row_id(driver, index):
    return js(driver, "const r = document.querySelector(`.rows .row[data-index=\"${arguments[0]}\"]`); return r && r.dataset.id ? Number(r.dataset.id) : null;", index)


def sign_in_again(driver):
    """Signs in on a page showing the form (after a sign-out)."""
    form = driver.find_element(By.ID, "signin")
    form.find_element(By.NAME, "name").send_keys(USER)
    form.find_element(By.NAME, "password").send_keys(PASSWORD + Keys.ENTER)
    wait(driver, lambda d: d.find_element(By.ID, "app").is_displayed(), "the signed-in page")
    wait(driver, settled, "the first rows")


def sign_in(driver):
    driver.get(BASE + "/")
    wait(driver, lambda d: d.find_element(By.ID, "signin").is_displayed(), "the sign-in form")
    form = driver.find_element(By.ID, "signin")
    form.find_element(By.NAME, "name").send_keys(USER)
    form.find_element(By.NAME, "password").send_keys("wrong" + Keys.ENTER)
    wait(driver, lambda d: "wrong name or password" in d.find_element(By.ID, "signin-error").text, "the sign-in error")
    form.find_element(By.NAME, "password").clear()
    form.find_element(By.NAME, "password").send_keys(PASSWORD + Keys.ENTER)
    wait(driver, lambda d: d.find_element(By.ID, "app").is_displayed(), "the signed-in page")
    wait(driver, settled, "the first rows")


def test_first_rows(driver):
    first = api(driver, "/api/tracks?limit=3")
    state = wait(driver, settled, "the first rows")
    assert state["first"] == 0 and state["id"] == first["items"][0]["id"], f"{state} vs {first['items'][0]['id']}"
    assert state["rowcount"] == first["total"] + 1, f"aria-rowcount {state['rowcount']} for {first['total']} tracks"
    assert f"{first['total']:,}" in driver.find_element(By.ID, "list-count").text
    # Every rendered row carries its aria-rowindex (the header is row 1).
    indexes = js(driver, "return [...document.querySelectorAll('.rows .row:not([hidden])')].map(r => [Number(r.dataset.index), Number(r.getAttribute('aria-rowindex'))])")
    assert indexes and all(rowindex == index + 2 for index, rowindex in indexes), indexes


def jump_to(driver, section, by_key=False):
    sections = {s["name"]: s for s in api(driver, "/api/sections?sort=artist")["sections"]}
    anchor = api(driver, "/api/anchor?sort=artist&section=" + section)
    expected = api(driver, "/api/tracks?sort=artist&limit=1&after=" + quote(anchor["cursor"]))["items"][0]["id"]
    assert anchor["index"] == sections[section]["firstIndex"]
    if by_key:
        driver.switch_to.active_element.send_keys(section)
    else:
        driver.find_element(By.CSS_SELECTOR, f'#jumpbar button[data-section="{section}"]').click()
    state = wait(driver, lambda d: (s := settled(d)) and s["first"] == anchor["index"] and s, f"the list at {section}")
    assert state["offset"] == 0, f"row {anchor['index']} is {state['offset']} px off the top"
    assert state["id"] == expected, f"first row of {section} is {state['id']}, the server says {expected}"


def test_jumps(driver):
    jump_to(driver, "M")
    jump_to(driver, "か")
    # Sections with no rows are disabled.
    sections = {s["name"] for s in api(driver, "/api/sections?sort=artist")["sections"] if s["count"] > 0}
    for button in driver.find_elements(By.CSS_SELECTOR, "#jumpbar button"):
        assert button.get_attribute("disabled") is None or button.get_attribute("data-section") not in sections
        assert button.get_attribute("disabled") is not None or button.get_attribute("data-section") in sections


def test_drag_to_end(driver):
    total = api(driver, "/api/tracks?limit=0")["total"]
    last = api(driver, f"/api/tracks?offset={total - 1}&limit=1")["items"][0]["id"]
    # What a scrollbar drag to the bottom does: the scroll position jumps, scroll events follow.
    height = js(driver, "const v = document.getElementById('viewport'); v.scrollTop = v.scrollHeight; return v.scrollHeight;")
    assert height < 10_000_000, f"the scroll area is {height} px: it must be scaled, never the real height"
    wait(driver, lambda d: settled(d) and row_id(d, total - 1) == last, "the last track")
    # And halfway, far from any loaded page: fetched by offset.
    js(driver, "const v = document.getElementById('viewport'); v.scrollTop = v.scrollHeight / 2;")
    state = wait(driver, settled, "the middle of the list")
    middle = api(driver, f"/api/tracks?offset={state['first']}&limit=1")["items"][0]["id"]
    assert state["id"] == middle, f"row {state['first']} is {state['id']}, the server says {middle}"
    js(driver, "document.getElementById('viewport').scrollTop = 0;")
    wait(driver, lambda d: (s := settled(d)) and s["first"] == 0, "the top again")


def test_sort_year_desc(driver):
    header = driver.find_element(By.CSS_SELECTOR, '.head-row button[data-sort="year"]')
    header.click()
    expected_asc = api(driver, "/api/tracks?sort=year&limit=1")["items"][0]["id"]
    wait(driver, lambda d: (s := settled(d)) and s["id"] == expected_asc, "year ascending")
    header.click()
    expected = api(driver, "/api/tracks?sort=year:desc&limit=1")["items"][0]["id"]
    wait(driver, lambda d: (s := settled(d)) and s["id"] == expected, "year descending")
    cell = header.find_element(By.XPATH, "..")
    assert cell.get_attribute("aria-sort") == "descending"
    driver.find_element(By.CSS_SELECTOR, '.head-row button[data-sort="artist"]').click()
    first = api(driver, "/api/tracks?sort=artist&limit=1")["items"][0]["id"]
    wait(driver, lambda d: (s := settled(d)) and s["id"] == first, "artist order again")


def type_into_search(driver, text):
    box = driver.find_element(By.ID, "search")
    box.clear()
    js(driver, "document.getElementById('search').dispatchEvent(new Event('input'))")
    for character in text:
        box.send_keys(character)


def test_search_as_you_type(driver):
    expected = api(driver, "/api/search?q=%E5%AE%87%E5%A4%9A&limit=5")
    assert expected["total"] > 0, "the library has no 宇多"
    type_into_search(driver, "宇多")
    wait(driver, lambda d: "宇多" in d.find_element(By.ID, "list-title").text and (s := settled(d)) and s["id"] == expected["items"][0]["id"], "the search results")
    assert grid_state(driver)["rowcount"] == expected["total"] + 1
    artists = js(driver, "return [...document.querySelectorAll('.rows .row:not([hidden]) [aria-colindex=\"2\"]')].map(c => c.textContent)")
    assert all("宇多" in artist for artist in artists[: expected["total"]]), artists


def test_filter_mistake(driver):
    type_into_search(driver, "year:19x")
    message = wait(driver, lambda d: d.find_element(By.ID, "search-error").text, "the filter's error")
    assert "position 6" in message and "19x" in message, message
    type_into_search(driver, "year:1990..1999 -genre:=Rock")
    expected = api(driver, "/api/tracks?sort=artist&limit=1&filter=" + "year%3A1990..1999%20-genre%3A%3DRock")
    wait(driver, lambda d: d.find_element(By.ID, "search-error").text == "" and (s := settled(d)) and s["id"] == expected["items"][0]["id"], "the filtered list")
    assert grid_state(driver)["rowcount"] == expected["total"] + 1
    type_into_search(driver, "")
    total = api(driver, "/api/tracks?limit=0")["total"]
    wait(driver, lambda d: (s := settled(d)) and s["rowcount"] == total + 1, "the whole list again")


def metrics(driver):
    values = {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
    return values["Nodes"], values["JSHeapUsedSize"]


def collect_garbage(driver):
    driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})


def test_memory_flat_over_whole_list(driver):
    js(driver, "document.getElementById('viewport').scrollTop = 0;")
    wait(driver, lambda d: (s := settled(d)) and s["first"] == 0, "the top")
    collect_garbage(driver)
    nodes_start, heap_start = metrics(driver)
    total = grid_state(driver)["rowcount"] - 1
    steps = 150
    most_nodes = nodes_start
    first = 0
    for step in range(1, steps + 1):
        js(driver, "const v = document.getElementById('viewport'); v.scrollTop = (v.scrollHeight - v.clientHeight) * arguments[0];", step / steps)
        # Settled rows of the new position: the old rows are settled too until the scroll
        # event is handled, and each step moves the first row by thousands.
        first = wait(driver, lambda d, before=first: (s := settled(d)) and s["first"] != before and s["first"], f"rows at step {step}")
        nodes, _ = metrics(driver)
        if nodes > nodes_start + 400:
            # The count includes nodes that are garbage but not yet collected: collect, then count.
            collect_garbage(driver)
            nodes, _ = metrics(driver)
        most_nodes = max(most_nodes, nodes)
    wait(driver, lambda d: settled(d) and row_id(d, total - 1) is not None, "the end of the list shown")
    collect_garbage(driver)
    nodes_end, heap_end = metrics(driver)
    print(f"     nodes {nodes_start:.0f} → at most {most_nodes:.0f} → {nodes_end:.0f}; heap {heap_start / 1e6:.1f} MB → {heap_end / 1e6:.1f} MB", flush=True)
    assert most_nodes <= nodes_start + 400, f"DOM nodes grew from {nodes_start} to {most_nodes}"
    assert abs(heap_end - heap_start) <= 0.2 * heap_start, f"JS heap went from {heap_start} to {heap_end}"


def test_keyboard(driver):
    grid = driver.find_element(By.ID, "grid")
    js(driver, "document.getElementById('search').focus()")
    driver.switch_to.active_element.send_keys(Keys.ENTER)  # Enter in the search box moves to the list
    assert grid_state(driver)["focused"], "Enter in the search box did not focus the list"
    keys = driver.switch_to.active_element
    keys.send_keys(Keys.HOME)
    wait(driver, lambda d: js(d, "const g = document.getElementById('grid'); const a = document.getElementById(g.getAttribute('aria-activedescendant')); return a && a.dataset.index === '0'"), "row 1 active")
    for _ in range(3):
        driver.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    active = lambda d: js(d, "const g = document.getElementById('grid'); const a = document.getElementById(g.getAttribute('aria-activedescendant')); return a ? Number(a.dataset.index) : -1")
    wait(driver, lambda d: active(d) == 3, "row 4 active")
    driver.switch_to.active_element.send_keys(Keys.PAGE_DOWN)
    wait(driver, lambda d: active(d) > 10, "a page down")
    driver.switch_to.active_element.send_keys(Keys.END)
    total = grid_state(driver)["rowcount"] - 1
    wait(driver, lambda d: active(d) == total - 1 and settled(d), "the last row active")
    assert grid_state(driver)["focused"], "focus left the list while rows were recycled"
    jump_to(driver, "M", by_key=True)
    assert grid_state(driver)["focused"]
    assert grid == driver.switch_to.active_element


def test_screens(driver, names):
    for width, height in [(1280, 800), (390, 844)]:
        viewport(driver, width, height)
        for name, show in names:
            show(driver)
            shot(driver, f"{name}-{width}x{height}")
    viewport(driver, 1280, 800)


def show_tracks(driver, whole=False):
    """The track list shown. Its rows can be painted while its count is still the reset one (a
    view switch clears aria-rowcount before the first page answers), so with `whole` this waits
    for the count of the whole library, the point a test that reads the count needs."""
    js(driver, "document.querySelector('[data-view=\"tracks\"]').click()")
    wait(driver, settled, "the track list")
    if whole:
        total = api(driver, "/api/tracks?limit=0")["total"]
        wait(driver, lambda d: (s := settled(d)) and s["rowcount"] == total + 1, f"the whole list of {total}")


def show_albums(driver):
    js(driver, "document.querySelector('[data-view=\"albums\"]').click()")
    wait(driver, lambda d: js(d, "return [...document.querySelectorAll('#groups-layer .tile:not([hidden]) img')].some(i => i.complete && i.naturalWidth > 0)"), "album covers")


def show_album(driver):
    show_albums(driver)
    js(driver, "document.querySelector('#groups-layer .tile[data-id]').click()")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#album-tracks li"), "an album's tracks")


def test_albums_grid(driver):
    show_albums(driver)
    # Each cover is asked for at its CSS width × devicePixelRatio, rounded up to a server step.
    sizes = js(driver, """
        return [...document.querySelectorAll('#groups-layer .tile:not([hidden]) img[src]')].map(i => [i.getBoundingClientRect().width, Number(new URL(i.src).searchParams.get('size'))]);
    """)
    steps = [16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1536, 2048]
    for width, size in sizes:
        assert size in steps and size >= width and (steps.index(size) == 0 or steps[steps.index(size) - 1] < width + 1), (width, size)
    # The grid's jump bar: the section's first album comes to the top row.
    sections = {x["name"]: x for x in api(driver, "/api/albums/sections?sortTags=on")["sections"]}
    name = "M" if sections.get("M", {}).get("count") else max(sections.values(), key=lambda x: x["count"])["name"]
    first = sections[name]["firstIndex"]
    album, after, seen = None, None, 0
    while album is None:
        page = api(driver, "/api/albums?sortTags=on&limit=10000" + (f"&after={quote(after)}" if after else ""))
        if first < seen + len(page["items"]):
            album = page["items"][first - seen]
        seen += len(page["items"])
        after = page["nextCursor"]
    driver.find_element(By.CSS_SELECTOR, f'#groups-jumpbar button[data-section="{name}"]').click()
    wait(driver, lambda d: js(d, "const t = document.querySelector(`#groups-layer .tile[data-index=\"${arguments[0]}\"]`); return t && t.dataset.id && t.getBoundingClientRect().top < 200 ? t.querySelector('.name').textContent : null", first) == (album["name"] or "(none)"), f"the albums at {name}")
    show_album(driver)
    show_tracks(driver)


def click_row(driver, index, *modifiers):
    # A row of the list on screen, laid out: a slow server (ThreadSanitizer's) can leave a view's
    # rows in the page before it is shown, and a click on one fails ("has no size and location").
    def shown(d):
        try:
            rows = d.find_elements(By.CSS_SELECTOR, f'.rows .row[data-index="{index}"][data-id]')
            return next((r for r in rows if r.is_displayed() and r.size["height"] > 0), None)
        except StaleElementReferenceException:  # the list redrew meanwhile
            return None

    row = wait(driver, shown, f"row {index}")
    actions = webdriver.ActionChains(driver)
    for key in modifiers:
        actions.key_down(key)
    actions.click(row)
    for key in modifiers:
        actions.key_up(key)
    actions.perform()


def selected_count(driver):
    text = driver.find_element(By.ID, "selection-count").text
    return int(text.split()[0].replace(",", "")) if text else 0


def test_selection_playlist_and_smart(driver):
    show_tracks(driver)
    ids = [t["id"] for t in api(driver, "/api/tracks?limit=6")["items"]]
    click_row(driver, 0)
    click_row(driver, 5, Keys.SHIFT)
    wait(driver, lambda d: selected_count(d) == 6, "six selected")
    click_row(driver, 2, Keys.CONTROL)
    wait(driver, lambda d: selected_count(d) == 5, "five selected")
    marked = js(driver, "return [...document.querySelectorAll('.rows .row[aria-selected=\"true\"]')].map(r => Number(r.dataset.id))")
    assert sorted(marked) == sorted(ids[:2] + ids[3:6]), marked
    driver.find_element(By.ID, "add-to-playlist").click()
    alert = wait(driver, lambda d: d.switch_to.alert, "the playlist prompt")
    alert.send_keys("Browser picks")
    alert.accept()
    # The sidebar is redrawn as the playlist changes: find and click it in one step.
    wait(driver, lambda d: js(d, "const b = [...document.querySelectorAll('#playlists button')].find(b => b.textContent === 'Browser picks'); if (b) b.click(); return Boolean(b);"), "the new playlist")
    wait(driver, lambda d: d.find_element(By.ID, "list-title").text == "Browser picks" and (s := settled(d)) and s["rowcount"] == 6, "the playlist's five tracks")
    shown = js(driver, "return [...document.querySelectorAll('.rows .row:not([hidden])')].map(r => Number(r.dataset.id))")
    assert sorted(shown) == sorted(ids[:2] + ids[3:6]), shown
    # Renamed from the sidebar: the list's title follows.
    js(driver, "[...document.querySelectorAll('#playlists li.playlist')].find(li => li.firstChild.textContent === 'Browser picks').querySelector('[data-action=\"rename\"]').click()")
    alert = wait(driver, lambda d: d.switch_to.alert, "the rename prompt")
    alert.send_keys("Picked in the browser")
    alert.accept()
    wait(driver, lambda d: d.find_element(By.ID, "list-title").text == "Picked in the browser", "the renamed playlist's title")
    assert js(driver, "return [...document.querySelectorAll('#playlists button')].some(b => b.textContent === 'Picked in the browser')")
    # A smart playlist: the server's error in place, then one that works.
    driver.find_element(By.ID, "new-smart").click()
    form = driver.find_element(By.ID, "smart-form")
    form.find_element(By.NAME, "name").send_keys("Browser smart")
    form.find_element(By.NAME, "rule").send_keys("year:19x")
    form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
    message = wait(driver, lambda d: d.find_element(By.ID, "smart-error").text, "the rule's error")
    assert "19x" in message, message
    form.find_element(By.NAME, "rule").clear()
    form.find_element(By.NAME, "rule").send_keys("year:1900..2100")
    form.find_element(By.NAME, "limit").send_keys("4")
    form.find_element(By.NAME, "by").send_keys("mostPlayed")
    form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
    wait(driver, lambda d: d.find_element(By.ID, "list-title").text == "Browser smart" and (s := settled(d)) and s["rowcount"] == 5, "the smart playlist's four tracks")
    show_tracks(driver)


def test_select_across_unloaded_pages(driver):
    js(driver, "document.getElementById('viewport').scrollTop = 0;")
    wait(driver, lambda d: (s := settled(d)) and s["first"] == 0, "the top")
    click_row(driver, 0)
    total = grid_state(driver)["rowcount"] - 1
    js(driver, "const v = document.getElementById('viewport'); v.scrollTop = v.scrollHeight;")
    click_row(driver, total - 1, Keys.SHIFT)
    wait(driver, lambda d: selected_count(d) == total, f"all {total} selected")
    js(driver, "document.getElementById('viewport').scrollTop = 0;")
    wait(driver, lambda d: (s := settled(d)) and s["first"] == 0, "the top")
    assert js(driver, "return [...document.querySelectorAll('.rows .row:not([hidden])')].every(r => r.getAttribute('aria-selected') === 'true')")
    click_row(driver, 0)
    wait(driver, lambda d: selected_count(d) == 1, "one selected")


def big_suite(driver):
    check("sign in", sign_in, driver)
    check("first rows", test_first_rows, driver)
    check("jump to M and か", test_jumps, driver)
    check("drag to the end", test_drag_to_end, driver)
    check("sort by year descending", test_sort_year_desc, driver)
    check("search 宇多 as you type", test_search_as_you_type, driver)
    check("a filter mistake shows the message", test_filter_mistake, driver)
    check("DOM nodes and heap flat over the whole list", test_memory_flat_over_whole_list, driver)
    check("keyboard: move, page, end, type a letter", test_keyboard, driver)
    check("shift-click selects across pages not loaded", test_select_across_unloaded_pages, driver)
    check("albums grid with covers at the screen's size", test_albums_grid, driver)


def test_play_and_next(driver):
    show_tracks(driver)
    first_two = api(driver, "/api/tracks?limit=2")["items"]
    js(driver, "document.getElementById('grid').focus()")
    driver.switch_to.active_element.send_keys(Keys.HOME)
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait(driver, lambda d: js(d, "return document.querySelector('.player').dataset.track") == str(first_two[0]["id"]), "the first track playing")
    wait(driver, lambda d: js(d, "return window.shelf.player.position()") > 0.3, "the position advancing")
    wait(driver, lambda d: d.find_element(By.ID, "time").text != "", "the time shown")
    assert js(driver, "return navigator.mediaSession.metadata && navigator.mediaSession.metadata.title") == first_two[0]["title"]
    queued = js(driver, "return [...document.querySelectorAll('#queue-list li')].map(li => Number(li.dataset.id))")
    assert queued[:2] == [first_two[0]["id"], first_two[1]["id"]], queued
    driver.find_element(By.ID, "next").click()
    wait(driver, lambda d: js(d, "return document.querySelector('.player').dataset.track") == str(first_two[1]["id"]), "the next track from the queue")
    wait(driver, lambda d: js(d, "return document.querySelector('.player').dataset.state === 'playing' && window.shelf.player.position() > 0.1"), "the next track playing")
    driver.find_element(By.ID, "play").click()
    wait(driver, lambda d: js(d, "return document.querySelector('.player').dataset.state") == "paused", "paused")


def test_edit_title(driver):
    show_tracks(driver)
    target = api(driver, "/api/tracks?limit=3")["items"][2]
    row = driver.find_element(By.CSS_SELECTOR, f'.rows .row[data-id="{target["id"]}"]')
    row.click()
    edit = driver.find_element(By.ID, "edit-selection")
    wait(driver, lambda d: edit.is_enabled(), "the edit button")
    edit.click()
    title = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, '#edit-fields input[name="title"]'), "the dialog")
    assert title.get_attribute("value") == (target["title"] or "")
    shot(driver, "edit-dialog-1280x800")
    title.clear()
    title.send_keys("Edited In The Browser")
    driver.find_element(By.ID, "edit-save").click()
    wait(driver, lambda d: "Updated 1" in d.find_element(By.ID, "edit-report").text, "the edit report")
    driver.find_element(By.ID, "edit-cancel").click()
    wait(driver, lambda d: "Edited In The Browser" in d.find_element(By.CSS_SELECTOR, f'.rows .row[data-id="{target["id"]}"]').text, "the new title in the list")
    shown = json.loads(subprocess.run([SHELF, "--library", LIBRARY, "track", str(target["id"]), "--json"], capture_output=True, text=True, check=True).stdout)
    assert shown["title"] == "Edited In The Browser", shown["title"]
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format_tags:stream_tags", "-of", "json", shown["path"]], capture_output=True, text=True, check=True)
    tags = json.loads(probe.stdout)
    values = [v for part in [tags.get("format", {}).get("tags", {})] + [s.get("tags", {}) for s in tags.get("streams", [])] for k, v in part.items() if k.lower() == "title"]
    assert "Edited In The Browser" in values, f"the file's tags: {tags}"

    # A new picture from a file, for the same track: in the library and in the file.
    PICTURE = os.path.join(ARTIFACTS, "new-cover.png")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=64x64", "-frames:v", "1", PICTURE], check=True)
    before = shown.get("artworkID")
    row = driver.find_element(By.CSS_SELECTOR, f'.rows .row[data-id="{target["id"]}"]')
    row.click()
    driver.find_element(By.ID, "edit-selection").click()
    picture = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, '#edit-fields input[name="picture"]'), "the picture input")
    picture.send_keys(PICTURE)
    driver.find_element(By.ID, "edit-save").click()
    wait(driver, lambda d: "Updated 1" in d.find_element(By.ID, "edit-report").text, "the picture's edit report")
    driver.find_element(By.ID, "edit-cancel").click()
    pictured = json.loads(subprocess.run([SHELF, "--library", LIBRARY, "track", str(target["id"]), "--json"], capture_output=True, text=True, check=True).stdout)
    assert pictured.get("artworkID") and pictured.get("artworkID") != before, (before, pictured.get("artworkID"))
    streams = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name", "-of", "json", pictured["path"]], capture_output=True, text=True, check=True)
    assert any(s.get("codec_type") == "video" for s in json.loads(streams.stdout).get("streams", [])), f"no picture in the file: {streams.stdout}"


def test_import_while_open(driver):
    show_tracks(driver, whole=True)
    js(driver, "window.shelfNoReload = true; document.getElementById('grid').focus()")
    before = grid_state(driver)["rowcount"] - 1
    count_before = driver.find_element(By.ID, "list-count").text
    result = subprocess.run([SHELF, "--library", LIBRARY, "import", IMPORT_DIR, "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    added = json.loads(result.stdout).get("added")
    wait(driver, lambda d: grid_state(d)["rowcount"] - 1 > before, "the new rows")
    after = grid_state(driver)["rowcount"] - 1
    if added is not None:
        assert after == before + added, f"{before} + {added} != {after}"
    wait(driver, lambda d: d.find_element(By.ID, "list-count").text != count_before, "the new count")
    assert js(driver, "return window.shelfNoReload === true"), "the page reloaded"
    assert grid_state(driver)["focused"], "focus was lost"
    sections = {s["name"]: s["count"] for s in api(driver, "/api/sections?sort=artist&sortTags=on")["sections"]}
    titles = js(driver, "return Object.fromEntries([...document.querySelectorAll('#jumpbar button')].map(b => [b.dataset.section, b.getAttribute('aria-label')]))")
    for name, count in sections.items():
        assert f"{count} rows" in titles[name], (name, count, titles[name])
    # An edit from a terminal: the row changes in place; the selection and the scroll position stay.
    js(driver, "document.getElementById('viewport').scrollTop = 64")
    state = wait(driver, lambda d: (s := settled(d)) and s["first"] == 2 and s, "rows from the third")
    target = row_id(driver, 3)
    click_row(driver, 3)
    wait(driver, lambda d: selected_count(d) == 1, "one selected")
    edited = subprocess.run([SHELF, "--library", LIBRARY, "edit", str(target), "--set", "title=Changed From A Terminal"], capture_output=True, text=True)
    assert edited.returncode == 0, edited.stderr
    wait(driver, lambda d: "Changed From A Terminal" in d.find_element(By.CSS_SELECTOR, f'.rows .row[data-id="{target}"]').text, "the edited title")
    after = grid_state(driver)
    assert after["first"] == state["first"], f"the list moved from row {state['first']} to {after['first']}"
    assert selected_count(driver) == 1 and driver.find_element(By.CSS_SELECTOR, f'.rows .row[data-id="{target}"]').get_attribute("aria-selected") == "true"
    assert js(driver, "return window.shelfNoReload === true"), "the page reloaded"


def sample_suite(driver):
    check("sign in", sign_in, driver)
    check("first rows", test_first_rows, driver)
    check("play a track, then the next from the queue", test_play_and_next, driver)
    check("edit a title in the dialog", test_edit_title, driver)
    check("selection, a playlist from it, a smart playlist", test_selection_playlist_and_smart, driver)
    if IMPORT_DIR:
        check("shelf import and shelf edit while the page is open", test_import_while_open, driver)

    def queue_open(d):
        show_tracks(d)
        js(d, "const q = document.getElementById('queue'); if (q.hidden) document.getElementById('queue-toggle').click();")

    def queue_closed(d):
        js(d, "const q = document.getElementById('queue'); if (!q.hidden) document.getElementById('queue-toggle').click();")

    def signin_screen(d):
        js(d, "document.getElementById('app').hidden = true; document.getElementById('signin').hidden = false;")

    def back(d):
        js(d, "document.getElementById('app').hidden = false; document.getElementById('signin').hidden = true;")
        queue_closed(d)
        show_tracks(d)

    kit = sys.modules[__name__]
    tones = []

    def tones_imported(d):
        tones.extend(web_checks.import_tones(kit))

    check("a tone album imported", tones_imported, driver)
    check("gapless joins and ReplayGain in the audio graph", lambda d: web_checks.test_gapless_and_replaygain(kit, d, tones), driver)
    check("synced lyrics", lambda d: web_checks.test_synced_lyrics(kit, d, tones), driver)
    check("the queue resumed on another device", lambda d: web_checks.test_queue_resume(kit, d, tones), driver)
    check("a stream-only user's player names Opus and seeks by time", lambda d: web_checks.test_stream_only_player(kit, d, tones), driver)
    check("a share from the selection, listed and revoked", lambda d: web_checks.test_share_a_selection(kit, d), driver)
    check("admin: users, API keys, scans, loudness, backups, statistics", lambda d: web_checks.test_admin(kit, d), driver)
    check("settings: theme, language, playback, sessions", lambda d: web_checks.test_settings(kit, d), driver)
    check("the library views: artist, album, missing, podcasts, radio, bookmarks", lambda d: web_checks.test_library_views(kit, d, tones), driver)
    check("folders: down to the tones and played; the library switcher", lambda d: web_checks.test_folders_and_libraries(kit, d, tones), driver)
    check("listening: the chart, the tops, the log and the scrobbling settings", lambda d: web_checks.test_listening(kit, d, tones), driver)
    check("instant mix and a path between two tracks, with why lines", lambda d: web_checks.test_instant_mix(kit, d, tones), driver)
    check("Japanese everywhere", lambda d: web_checks.test_japanese(kit, d), driver)
    check("the shell offline", lambda d: web_checks.test_offline_shell(kit, d), driver)
    check("axe on every view, dialog and theme", lambda d: web_checks.test_axe(kit, d), driver)
    check("a keyboard walk", lambda d: web_checks.test_keyboard_walk(kit, d), driver)
    check("every view at 390x844", lambda d: web_checks.test_phone_screens(kit, d), driver)

    check("screenshots", lambda d: test_screens(d, [
        ("tracks", lambda d: (queue_closed(d), show_tracks(d))), ("queue", queue_open), ("albums", lambda d: (queue_closed(d), show_albums(d))),
        ("album", show_album), ("signin", signin_screen), ("back", back)]), driver)


def proxy_suite(driver):
    check("sign in", sign_in, driver)
    check("the first rows through the proxy", test_first_rows, driver)

    def plays(d):
        # Playing at all is what the proxy can break (the stream's URL and its ranges); the queue's
        # next track is the sample suite's check, and with three-second tracks under load it races
        # the end of the first.
        show_tracks(d)
        first = api(d, "/api/tracks?limit=1")["items"][0]
        js(d, "document.getElementById('grid').focus()")
        d.switch_to.active_element.send_keys(Keys.HOME)
        d.switch_to.active_element.send_keys(Keys.ENTER)
        wait(d, lambda d: js(d, "return document.querySelector('.player').dataset.track") == str(first["id"]), "the first track playing")
        wait(d, lambda d: js(d, "return window.shelf.player.position()") > 0.3, "the position advancing")
    check("play a track through the proxy", plays, driver)

    def worker_scope(d):
        scope = wait(d, lambda d: js_async(d, "const done = arguments[arguments.length - 1];"
                                              "navigator.serviceWorker.ready.then(r => done(r.scope), () => done(''));"), "the service worker")
        assert scope == BASE + "/", f"the worker's scope is {scope}, not {BASE}/"
    check("the service worker under the base path", worker_scope, driver)


def main():
    driver = browser()
    viewport(driver, 1280, 800)
    try:
        {"big": big_suite, "sample": sample_suite, "proxy": proxy_suite}[SUITE](driver)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and "401" not in e["message"] and "favicon" not in e["message"]]
        for error in errors:
            print(f"browser console: {error['message']}", flush=True)
        if any("Content Security Policy" in e["message"] for e in errors):
            failures.append("content security policy")
    finally:
        driver.quit()
    print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all passed'}", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

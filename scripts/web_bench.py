"""`shelf-bench web`'s browser half: headless Chromium (Debian's) driven by Selenium (the project's
.venv) against a running `shelf serve`, signed in with a session cookie made by shelf-bench.

    web_bench.py BASE SESSION_TOKEN SCROLL_ROWS

Prints one JSON object: navigation → first rows painted, jump to a letter → rows painted, a
scripted fast scroll over SCROLL_ROWS rows (long animation frames over 50 ms, frames dropped),
the album grid's first paint with covers, and the JS heap and DOM nodes before and after
scrolling the whole list. Every figure is measured inside the page with performance.now().
"""

import gzip
import json
import os
import re
import sys
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

BASE, TOKEN, SCROLL_ROWS = sys.argv[1], sys.argv[2], int(sys.argv[3])

options = webdriver.ChromeOptions()
options.binary_location = os.environ.get("SHELF_CHROMIUM", "/usr/bin/chromium")
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800"]:
    options.add_argument(argument)
driver = webdriver.Chrome(options=options, service=Service(executable_path=os.environ.get("SHELF_CHROMEDRIVER", "/usr/bin/chromedriver")))
driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
wait = WebDriverWait(driver, 600, poll_frequency=0.02)
# The scroll and jump scripts run as long as the page takes: on a loaded machine (the test suite
# beside it) that can pass Selenium's 30 s default, which is a slow run, not a failure; 600 s
# bounds a hang, as the waits above do.
driver.set_script_timeout(600)
result = {}


def metrics():
    # The Performance domain is turned on only here: enabled, it slows every page load by a third
    # (measured: 472/595/353 ms without, 747/656/487 ms with), which is DevTools' cost, not the page's.
    driver.execute_cdp_cmd("Performance.enable", {})
    driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
    values = {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
    return int(values["Nodes"]), int(values["JSHeapUsedSize"])


def settled(d):
    return d.execute_script("const g = document.getElementById('grid'); return g && g.dataset.waiting === '0' && document.querySelector('.rows .row[data-id]') !== null")


try:
    # The cookie belongs to the origin: set it on a page of the server, then load the page itself.
    driver.get(BASE + "/app/icon.svg")
    driver.add_cookie({"name": "shelf_session", "value": TOKEN, "path": "/"})
    firsts = []
    for _ in range(3):
        driver.get(BASE + "/")
        wait.until(lambda d: d.execute_script("return performance.getEntriesByName('shelf:first-rows').length > 0"))
        firsts.append(driver.execute_script("return performance.getEntriesByName('shelf:first-rows')[0].startTime"))
    result["firstRowsMs"] = sorted(firsts)[1]
    result["firstRowsMaxMs"] = max(firsts)
    result["firstRowsRunsMs"] = firsts
    result["total"] = driver.execute_script("return Number(document.getElementById('grid').getAttribute('aria-rowcount')) - 1")

    # Jump to a letter: from the click to the frame after the section's first row is painted at the top.
    jumps = []
    for section in ["M", "か", "S", "#", "B"]:
        jumps.append(driver.execute_async_script("""
            const [section, done] = arguments;
            const grid = document.getElementById('grid');
            const button = document.querySelector(`#jumpbar button[data-section="${section}"]`);
            if (!button || button.disabled) return done(null);
            const started = performance.now();
            fetch(`/api/anchor?sort=artist&sortTags=on&section=${encodeURIComponent(section)}`).then(r => r.json()).then((anchor) => {
              const check = () => {
                if (grid.dataset.first === String(anchor.index) && grid.dataset.waiting === '0') {
                  requestAnimationFrame(() => done(performance.now() - started));
                } else {
                  requestAnimationFrame(check);
                }
              };
              check();
            });
            button.click();
        """, section))
    jumps = [j for j in jumps if j is not None]
    if jumps:
        result["jumpMs"] = sorted(jumps)[len(jumps) // 2]
        result["jumpMaxMs"] = max(jumps)

    # A fast scroll over SCROLL_ROWS rows from the top: a constant speed per frame (about 4 s),
    # with long animation frames observed and frame gaps counted.
    driver.execute_script("document.getElementById('viewport').scrollTop = 0")
    wait.until(settled)
    scroll = driver.execute_async_script("""
        const [rows, done] = arguments;
        const viewport = document.getElementById('viewport');
        const grid = document.getElementById('grid');
        const table = { rowHeight: parseFloat(getComputedStyle(grid).getPropertyValue('--row')) || 32 };
        const total = Number(grid.getAttribute('aria-rowcount')) - 1;
        const ratio = (total * table.rowHeight - viewport.clientHeight) / (viewport.scrollHeight - viewport.clientHeight);
        const frames = 240;
        const perFrame = rows * table.rowHeight / ratio / frames;
        const long = [];
        let observer = null;
        try {
          observer = new PerformanceObserver((list) => { for (const entry of list.getEntries()) long.push(entry.duration); });
          observer.observe({ type: 'long-animation-frame', buffered: false });
        } catch (error) { /* no LoAF in this browser: frame gaps still count */ }
        let frame = 0;
        let last = performance.now();
        const gaps = [];
        let placeholders = 0;
        const step = (now) => {
          gaps.push(now - last);
          last = now;
          placeholders += Number(grid.dataset.waiting);
          if (frame++ >= frames) {
            observer?.disconnect();
            const interval = gaps.slice(1).sort((a, b) => a - b)[Math.floor(gaps.length / 2)] || 16.7;
            done({ longFrames: long.filter((d) => d > 50).length, longestFrameMs: Math.max(0, ...long, ...gaps.slice(1)),
                   droppedFrames: gaps.slice(1).filter((g) => g > interval * 1.5).length, frames, frameIntervalMs: interval,
                   placeholderRowFrames: placeholders, rowsScrolled: Math.round(Number(grid.dataset.first)) });
            return;
          }
          viewport.scrollTop += perFrame;
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
    """, SCROLL_ROWS)
    result.update({f"scroll{k[0].upper()}{k[1:]}": v for k, v in scroll.items()})

    # Heap and DOM nodes: at the top, then after scrolling the whole list (200 jumps, each painted),
    # with the main thread's long tasks (PerformanceObserver 'longtask', over 50 ms) counted all along.
    driver.execute_script("document.getElementById('viewport').scrollTop = 0")
    wait.until(settled)
    result["nodesBefore"], result["heapBeforeBytes"] = metrics()
    driver.execute_script("""
        window.__longTasks = [];
        window.__longTaskObserver = new PerformanceObserver((list) => { for (const entry of list.getEntries()) window.__longTasks.push(entry.duration); });
        window.__longTaskObserver.observe({ type: 'longtask', buffered: false });
    """)
    for step in range(1, 201):
        driver.execute_script("const v = document.getElementById('viewport'); v.scrollTop = (v.scrollHeight - v.clientHeight) * arguments[0];", step / 200)
        wait.until(settled)
    tasks = driver.execute_script("window.__longTaskObserver.disconnect(); return window.__longTasks;")
    result["wholeListLongTasks"] = len(tasks)
    result["wholeListLongestTaskMs"] = max(tasks) if tasks else 0
    result["nodesAfter"], result["heapAfterBytes"] = metrics()

    # The album grid: from the click to the first frame with every cover in view decoded.
    result["albumGridMs"] = driver.execute_async_script("""
        const done = arguments[0];
        const started = performance.now();
        document.querySelector('[data-view="albums"]').click();
        const check = () => {
          const tiles = [...document.querySelectorAll('#groups-layer .tile:not([hidden])')].filter((t) => t.getBoundingClientRect().top < innerHeight);
          const covers = tiles.map((t) => t.querySelector('img')).filter((i) => i.hasAttribute('src'));
          if (tiles.length && tiles.every((t) => t.dataset.id) && covers.length && covers.every((i) => i.complete && i.naturalWidth > 0)) {
            requestAnimationFrame(() => done(performance.now() - started));
          }
          else requestAnimationFrame(check);
        };
        check();
    """)
    # The shell: every file the service worker keeps (its list is in /sw.js), as the server sends
    # them and gzip-compressed (level 6, what a compressing proxy would send).
    worker = urllib.request.urlopen(BASE + "/sw.js").read().decode()
    files = re.findall(r"'(/[^']*)'", worker[worker.index("const FILES"):worker.index("];", worker.index("const FILES"))])
    raw = compressed = 0
    for path in files + ["/sw.js"]:
        body = urllib.request.urlopen(BASE + path).read()
        raw += len(body)
        compressed += len(gzip.compress(body, compresslevel=6))
    result["shellFiles"] = len(files) + 1
    result["shellBytes"] = raw
    result["shellGzipBytes"] = compressed
    print(json.dumps(result), flush=True)
finally:
    driver.quit()

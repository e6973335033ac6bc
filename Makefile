# Shelf's build entry points. Only the Swift toolchain and Debian packages are needed;
# `make deps` installs the missing packages when run as root, and otherwise prints the command.

# What building and running Shelf needs (`make demo`): its C libraries (FFmpeg's and FFTW3 for the
# sonic analysis), ffmpeg, and curl and
# python3 for the demo script.
DEBIAN_PACKAGES := libsqlite3-dev libssl-dev libjpeg62-turbo-dev libpng-dev libwebp-dev libtag1-dev libmicrohttpd-dev libcurl4-openssl-dev libebur128-dev libavformat-dev libavcodec-dev libswresample-dev libavutil-dev libfftw3-dev ffmpeg libxml2-dev libldap-dev python3 curl
# What the tests need besides (`make test`, `make deps-test`): the jukebox's mpv (optional for
# running Shelf: only jukebox=true needs it), the browser and its driver, a CJK font for the
# screenshots, wrk, the Debian packaging tools, man's groff, ESLint for the page, and the reverse
# proxies the proxy tests put in front of Shelf (nginx, Caddy), and the LDAP server and tools the
# directory sign-in tests run (slapd, ldap-utils, openssl for its certificate).
DEBIAN_TEST_PACKAGES := mpv python3-venv wrk groff-base chromium chromium-driver fonts-ipafont-gothic dpkg-dev lintian eslint nginx caddy slapd ldap-utils openssl
SWIFT ?= swift
DEMO_DIR ?= demo-library
BENCH_DIR ?= bench-library
# `make bench-1m`'s libraries (about 25 GB at both sizes) and its JSON documents.
BENCH_1M_DIR ?= bench-1m

PREFIX ?= /usr/local
DESTDIR ?=
# The binary `make install` copies; the default is built first, one given on the command line is taken as it is.
SHELF_BIN ?= .build/release/shelf
BUILD_COMMIT_HEADER := Sources/CShelfBuild/build_commit.h

.PHONY: audio-venv deps deps-test install-packages build-info build release test test-full tsan asan fuzz demo bench bench-1m clean subsonic-client install uninstall snapshots lint format deb static-release docs generated-docs coverage image test-image test-build

deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEBIAN_PACKAGES)"

deps-test: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEBIAN_TEST_PACKAGES)"

install-packages:
	@missing=""; \
	for pkg in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$pkg"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "installing:$$missing"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	else \
	  echo "missing Debian packages:$$missing"; \
	  echo "run: sudo apt-get update && sudo apt-get install -y$$missing"; \
	  exit 1; \
	fi

# The commit `shelf --version` reports, in a gitignored header that CShelfBuild includes when it
# exists ("unknown" without it, as in a plain `swift build`). Rewritten only when the commit changed,
# so an unchanged tree does not recompile; the .c file is touched too, because a build that compiled it
# while the header was missing has no dependency on the header to notice it appear.
build-info:
	@commit=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown); \
	line="#define SHELF_BUILD_COMMIT \"$$commit\""; \
	[ "$$(cat $(BUILD_COMMIT_HEADER) 2>/dev/null)" = "$$line" ] || { echo "$$line" > $(BUILD_COMMIT_HEADER); touch Sources/CShelfBuild/shelf_build.c; }

# Debug builds made by make carry no debug information: it is a fifth of a fresh build's time on
# two cores, and a test's failure names its line without it. `swift build` by hand still has it
# (and so rebuilds after make, and make after it).
DEBUG_FLAGS := -Xswiftc -gnone

build: deps build-info
	$(SWIFT) build $(DEBUG_FLAGS)

# The two programs `make demo` and `make bench` run. Not every product: shelf-fuzz reaches the
# engine's internals through @testable imports, which a release build refuses; `make fuzz` builds it.
release: deps build-info
	$(SWIFT) build -c release --product shelf
	$(SWIFT) build -c release --product shelf-bench

# The Swift runtime linked into the binary. SwiftPM's --static-swift-stdlib can relink objects that
# were compiled against the shared runtime's module files, whose link entries name Foundation's top
# libraries only; the static archives' own dependencies (CoreFoundation, ICU, collections, the XML
# interface and Debian's libxml2) are named here, in one group so that their order does not matter.
STATIC_SWIFT_LINK := --static-swift-stdlib -Xlinker --start-group -Xlinker -lFoundation -Xlinker -lFoundationEssentials \
	-Xlinker -lFoundationInternationalization -Xlinker -lFoundationXML -Xlinker -lCoreFoundation -Xlinker -l_CFXMLInterface \
	-Xlinker -l_FoundationICU -Xlinker -l_FoundationCollections -Xlinker -l_FoundationCShims -Xlinker --end-group -Xlinker -lxml2

# The `shelf` the tests run is relinked with the Swift runtime inside it (a link, not a rebuild), as
# the .deb ships it: DebianPackageTests packages, installs and removes exactly that binary.
# The venv (network-bound) and the lint run beside the build rather than before it: together about
# 25 s of a fresh run's ten minutes.
test: deps-test build-info
	@$(MAKE) --no-print-directory -j3 subsonic-client lint test-build
	$(SWIFT) test --skip-build

test-build:
	$(SWIFT) build --build-tests $(DEBUG_FLAGS)
	$(SWIFT) build --product shelf $(DEBUG_FLAGS) $(STATIC_SWIFT_LINK)

# The whole suite with the long parity matrices and the browser's 500,500-track library run whole
# (make test samples them; see TestScale).
test-full: deps-test build-info
	@$(MAKE) --no-print-directory -j3 audio-venv lint test-build
	SHELF_TEST_FULL=1 $(SWIFT) test --skip-build

# Line coverage per module from the toolchain's llvm-cov, over the whole suite (an instrumented
# build in its own folder).
coverage: deps-test build-info subsonic-client
	$(SWIFT) build --build-tests --enable-code-coverage --scratch-path .build/coverage
	$(SWIFT) test --skip-build --enable-code-coverage --scratch-path .build/coverage || true
	scripts/coverage.sh .build/coverage

# The DocC documentation of the Shelf library, in .build/docs/Shelf.doccarchive; fails on any docc warning.
docs: build
	SWIFT=$(SWIFT) scripts/make-docs.sh

# Rewrites the pages generated from the command and settings tables (GeneratedDocsTests fails
# while one is out of date).
generated-docs: build
	.build/debug/shelf help --markdown > docs/cli.md
	.build/debug/shelf config reference > docs/config.md
	.build/debug/shelf config example > contrib/config.toml

# The toolchain's own swift-format, with the rules in .swift-format: `make lint` fails on any
# finding, `make format` rewrites the tree in place.
SWIFT_FORMAT_PATHS := Package.swift Sources Tests
lint:
	$(SWIFT) format lint --strict --recursive --parallel $(SWIFT_FORMAT_PATHS)
	scripts/eslint.sh

format:
	$(SWIFT) format --in-place --recursive --parallel $(SWIFT_FORMAT_PATHS)

# Rewrites the Subsonic snapshot files (Tests/ShelfServerTests/Snapshots) from what the writers
# make now; review the diff before committing it.
snapshots: deps build-info
	$(SWIFT) build --build-tests $(DEBUG_FLAGS)
	SHELF_UPDATE_SNAPSHOTS=1 $(SWIFT) test --skip-build --filter SubsonicSnapshotTests

# py-opensonic, a Subsonic client from PyPI, Selenium, the browser driver, and mutagen, the tag
# library Picard and beets write with, in the project's own .venv (gitignored): the Subsonic tests
# drive the server through the first, the web page's browser suite drives headless Chromium
# through the second, the tag round-trip tests write and read files with the third (TagLib is
# not graded by TagLib), and each skips its part when its package is missing. A failed install (no network) leaves no half-made venv behind, so the rest
# of the suite still runs.
subsonic-client:
	@if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import libopensonic, selenium, mutagen" 2>/dev/null; then \
	  rm -rf .venv; \
	  (python3 -m venv .venv && .venv/bin/pip install --quiet py-opensonic selenium mutagen) \
	    || { echo "make: could not install py-opensonic, selenium and mutagen into .venv; the Subsonic client, browser and tag round-trip tests will be skipped" >&2; rm -rf .venv; }; \
	fi
	@# Maloja, a scrobble server, and beets, each from PyPI in a venv of its own (their pinned
	@# dependencies stay out of the tests' venv): the scrobbling tests run Maloja on loopback and send
	@# it listens; the import tests build a beets library with real beets.
	@if [ -x .venv/bin/python ] && [ ! -x .venv/maloja/bin/maloja ]; then \
	  (python3 -m venv .venv/maloja && .venv/maloja/bin/pip install --quiet malojaserver) \
	    || { echo "make: could not install malojaserver into .venv/maloja; the Maloja scrobbling test will be skipped" >&2; rm -rf .venv/maloja; }; \
	fi
	@if [ -x .venv/bin/python ] && [ ! -x .venv/beets/bin/beet ]; then \
	  (python3 -m venv .venv/beets && .venv/beets/bin/pip install --quiet beets) \
	    || { echo "make: could not install beets into .venv/beets; the beets import test will be skipped" >&2; rm -rf .venv/beets; }; \
	fi
	@# axe-core 4.x, for the browser suite's accessibility checks: axe-selenium-python 3.x carries
	@# it but wants Python 3.12, so only its wheel is fetched and axe.min.js taken out of it.
	@if [ -x .venv/bin/python ] && [ ! -f .venv/axe/axe.min.js ]; then \
	  rm -rf .venv/axe-wheel && mkdir -p .venv/axe .venv/axe-wheel && \
	  .venv/bin/pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --dest .venv/axe-wheel "axe-selenium-python>=3,<4" && \
	  .venv/bin/python -c "import zipfile, glob, sys; w = zipfile.ZipFile(glob.glob('.venv/axe-wheel/*.whl')[0]); n = [x for x in w.namelist() if x.endswith('axe.min.js')][0]; open('.venv/axe/axe.min.js', 'wb').write(w.read(n))" \
	  || { echo "make: could not fetch axe-core (axe-selenium-python's wheel); the browser suite's accessibility checks will be skipped" >&2; rm -rf .venv/axe; }; \
	  rm -rf .venv/axe-wheel; \
	fi

# librosa (PyPI), in a venv of its own (.venv/audio), the independent judge of the sonic
# descriptors (SonicTests' librosa check, which make test skips: installing librosa and compiling
# its numba kernels costs about a minute of the two cores make test has ten minutes of), and with
# essentia the peers of `shelf-bench sonic`. No .pyc files are written ahead (--no-compile);
# importing librosa once compiles its kernels into the venv's cache.
audio-venv: subsonic-client
	@if [ -x .venv/bin/python ] && ! .venv/audio/bin/python -c "import librosa" 2>/dev/null; then \
	  rm -rf .venv/audio; \
	  (python3 -m venv .venv/audio && .venv/audio/bin/pip install --quiet --no-compile librosa && .venv/audio/bin/python -c "import librosa") \
	    || { echo "make: could not install librosa into .venv/audio; the librosa check of the sonic test will be skipped" >&2; rm -rf .venv/audio; }; \
	fi

# The suite under ThreadSanitizer, in its own build folder; the `shelf` children the CLI tests run
# are instrumented too, and exit 66 on any report.
tsan: deps-test build-info
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan
	SHELF_SANITIZER=thread TSAN_OPTIONS="second_deadlock_stack=1 $(TSAN_OPTIONS)" $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build/tsan

# The suite under AddressSanitizer (and its leak checker), in its own build folder, as `make tsan`.
asan: deps-test build-info
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build/asan
	SHELF_SANITIZER=address ASAN_OPTIONS="detect_leaks=0 suppressions=$(CURDIR)/Tests/Sanitizers/asan.supp $(ASAN_OPTIONS)" $(SWIFT) test --skip-build --sanitize=address --scratch-path .build/asan

# Every fuzz target of `shelf-fuzz` under libFuzzer and AddressSanitizer for FUZZ_SECONDS each
# (or FUZZ_RUNS executions, whichever comes first; -1: no limit), from its committed seeds (Tests/Fuzz/corpus) plus what earlier runs found (.build/fuzz-corpus);
# fails on a crash, a leak, an AddressSanitizer report or a broken invariant. Findings are left in
# .build/fuzz-findings/TARGET; each becomes a file in Tests/Fuzz/crashes/TARGET with its fix.
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= -1
FUZZ_TARGETS ?=
fuzz: deps-test build-info
	$(SWIFT) build --product shelf-fuzz --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -gnone -Xswiftc -use-ld=lld
	@set -e; bin=.build/fuzz/debug/shelf-fuzz; failed=""; \
	for target in $(or $(FUZZ_TARGETS),$$($$bin --list)); do \
	  mkdir -p .build/fuzz-corpus/$$target .build/fuzz-findings/$$target; \
	  echo "fuzz: $$target for $(FUZZ_SECONDS) s or $(FUZZ_RUNS) runs"; \
	  if ! LSAN_OPTIONS="suppressions=$(CURDIR)/Tests/Fuzz/lsan.supp $(LSAN_OPTIONS)" $$bin $$target -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -print_final_stats=1 -artifact_prefix=.build/fuzz-findings/$$target/ \
	      -max_len=65536 -rss_limit_mb=2048 -timeout=10 .build/fuzz-corpus/$$target Tests/Fuzz/corpus/$$target > .build/fuzz-findings/$$target.log 2>&1; then \
	    failed="$$failed $$target"; tail -40 .build/fuzz-findings/$$target.log; \
	  fi; \
	  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" .build/fuzz-findings/$$target.log | tr '\n' ' '; echo; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: findings in$$failed (inputs in .build/fuzz-findings)"; exit 1; fi

demo: release
	rm -rf $(DEMO_DIR)
	.build/release/shelf-bench sample-files --tracks 2000 --tagged --dir $(DEMO_DIR)/music
	.build/release/shelf --library $(DEMO_DIR)/library token > $(DEMO_DIR)/start-token
	.build/release/shelf --library $(DEMO_DIR)/library import $(DEMO_DIR)/music
	.build/release/shelf --library $(DEMO_DIR)/library info
	.build/release/shelf --library $(DEMO_DIR)/library tracks --sort artist --limit 20
	.build/release/shelf --library $(DEMO_DIR)/library sections --sort artist
	.build/release/shelf --library $(DEMO_DIR)/library tracks --sort year:desc --filter 'year:1990..1999 -genre:=rock' --limit 5
	.build/release/shelf --library $(DEMO_DIR)/library search 宇多 --limit 5
	.build/release/shelf --library $(DEMO_DIR)/library search the --limit 5
	.build/release/shelf --library $(DEMO_DIR)/library artists --by albumArtist --limit 8
	.build/release/shelf --library $(DEMO_DIR)/library artists --limit 8
	.build/release/shelf --library $(DEMO_DIR)/library tracks --filter 'label:=warp bpm:120..140 replayGain:yes' --limit 5
	.build/release/shelf --library $(DEMO_DIR)/library playlist list
	.build/release/shelf --library $(DEMO_DIR)/library albums --limit 8
	# The smart playlist's ID follows the playlists the import made from .m3u8 files.
	id=$$(.build/release/shelf --library $(DEMO_DIR)/library smart create 'Loved nineties' --rule 'year:1990..1999 , genre:=Rock' --limit 60m --by mostPlayed --json \
	  | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])') && echo "created smart playlist $$id 'Loved nineties'" \
	  && .build/release/shelf --library $(DEMO_DIR)/library smart show $$id --limit 5
	.build/release/shelf --library $(DEMO_DIR)/library edit 1 2 --set genre=Jazz --set year=1999
	.build/release/shelf --library $(DEMO_DIR)/library draft 1
	.build/release/shelf --library $(DEMO_DIR)/library export 1 2 3 --to $(DEMO_DIR)/export --format mp3 --bitrate 128
	.build/release/shelf --library $(DEMO_DIR)/library artwork --stats
	.build/release/shelf --library $(DEMO_DIR)/library artwork 1 --size 64 --out $(DEMO_DIR)/cover-1.png
	.build/release/shelf --library $(DEMO_DIR)/library import $(DEMO_DIR)/music
	.build/release/shelf --library $(DEMO_DIR)/library changes --since "$$(cat $(DEMO_DIR)/start-token)" --summary | cut -c1-240
	scripts/demo-serve.sh .build/release/shelf $(DEMO_DIR)/library $(DEMO_DIR)/serve

bench: deps-test release audio-venv
	rm -rf $(BENCH_DIR)
	.build/release/shelf-bench generate --tracks 500500 --library $(BENCH_DIR)
	.build/release/shelf --library $(BENCH_DIR) info --json
	.build/release/shelf-bench history --library $(BENCH_DIR)-history --small-library $(BENCH_DIR)-history-small
	.build/release/shelf-bench mirror --library $(BENCH_DIR)-mirror
	.build/release/shelf-bench libraries --tracks 500500 --library $(BENCH_DIR)-libraries
	.build/release/shelf-bench listens --tracks 500500 --listens 1000000 --library $(BENCH_DIR)-listens
	@# essentia for shelf-bench sonic's peers, beside librosa (audio-venv).
	[ -x .venv/audio/bin/python ] && .venv/audio/bin/python -c "import essentia" 2>/dev/null || .venv/audio/bin/pip install --quiet essentia || true
	.build/release/shelf-bench sonic --library $(BENCH_DIR)-sonic
	.build/release/shelf-bench artwork --library $(BENCH_DIR)-artwork
	.build/release/shelf-bench import --files 10000 --dir $(BENCH_DIR)-import
	@# Real files of real sizes (made once with ffmpeg and mutagen), cold and warm, beside supysonic, beets and musickit.
	.build/release/shelf-bench import --realistic --files 2000 --dir $(BENCH_DIR)-realistic
	.build/release/shelf-bench rescan --files 500500 --dir $(BENCH_DIR)-rescan
	.build/release/shelf-bench serve --library $(BENCH_DIR)-serve
	.build/release/shelf-bench subsonic --library $(BENCH_DIR)-serve
	.build/release/shelf-bench sync --library $(BENCH_DIR)-sync --small-library $(BENCH_DIR)-sync-small
	.build/release/shelf-bench web --library $(BENCH_DIR)-serve
	.build/release/shelf-bench watch --dir $(BENCH_DIR)-watch
	.build/release/shelf-bench loudness --dir $(BENCH_DIR)-loudness

# The benchmarks at 500,500 and 1,000,000 tracks in one run, each pair side by side with the
# ratio (scripts/bench_scale.py). Long: about two hours on a 2-core machine, most of it generating.
BENCH_1M_SIZES := 500500 1000000
bench-1m: deps-test release subsonic-client
	mkdir -p $(BENCH_1M_DIR)/json
	.build/release/shelf-bench mirror --tracks 500500,1000000 --library $(BENCH_1M_DIR)/mirror
	for n in $(BENCH_1M_SIZES); do \
	  .build/release/shelf-bench serve --tracks $$n --library $(BENCH_1M_DIR)/serve-$$n --json > $(BENCH_1M_DIR)/json/serve-$$n.json && \
	  .build/release/shelf-bench subsonic --tracks $$n --library $(BENCH_1M_DIR)/serve-$$n --json > $(BENCH_1M_DIR)/json/subsonic-$$n.json && \
	  .build/release/shelf-bench web --tracks $$n --library $(BENCH_1M_DIR)/serve-$$n --json > $(BENCH_1M_DIR)/json/web-$$n.json && \
	  .build/release/shelf-bench sync --tracks $$n --library $(BENCH_1M_DIR)/sync-$$n --small-library $(BENCH_1M_DIR)/sync-small --json > $(BENCH_1M_DIR)/json/sync-$$n.json && \
	  .build/release/shelf-bench history --tracks $$n --library $(BENCH_1M_DIR)/history-$$n --small-library $(BENCH_1M_DIR)/history-small --json > $(BENCH_1M_DIR)/json/history-$$n.json || exit 1; \
	done
	python3 scripts/bench_scale.py $(foreach b,serve subsonic web sync history,$(BENCH_1M_DIR)/json/$(b)-500500.json $(BENCH_1M_DIR)/json/$(b)-1000000.json)

clean:
	rm -rf .build $(DEMO_DIR) $(BENCH_1M_DIR) $(BENCH_DIR) $(BENCH_DIR)-history $(BENCH_DIR)-history-small $(BENCH_DIR)-mirror $(BENCH_DIR)-libraries $(BENCH_DIR)-listens $(BENCH_DIR)-sonic $(BENCH_DIR)-artwork $(BENCH_DIR)-import $(BENCH_DIR)-realistic $(BENCH_DIR)-rescan $(BENCH_DIR)-serve $(BENCH_DIR)-sync $(BENCH_DIR)-sync-small $(BENCH_DIR)-watch $(BENCH_DIR)-loudness

# The files `make install` writes and `make uninstall` removes: nothing else is touched.
INSTALL_ROOT = $(DESTDIR)$(PREFIX)
INSTALLED_FILES = $(INSTALL_ROOT)/bin/shelf $(INSTALL_ROOT)/share/man/man1/shelf.1 \
	$(INSTALL_ROOT)/share/bash-completion/completions/shelf $(INSTALL_ROOT)/share/zsh/site-functions/_shelf \
	$(INSTALL_ROOT)/share/fish/vendor_completions.d/shelf.fish

# `shelf` with its man page and completions, all written by the binary being installed, so they
# describe exactly its commands. The release binary is built when missing (so `make release` as
# yourself, then `sudo make install`, leaves no root-owned build); SHELF_BIN=path installs another.
install: $(SHELF_BIN)
	install -D -m 755 $(SHELF_BIN) $(INSTALL_ROOT)/bin/shelf
	install -d $(INSTALL_ROOT)/share/man/man1 $(INSTALL_ROOT)/share/bash-completion/completions \
	  $(INSTALL_ROOT)/share/zsh/site-functions $(INSTALL_ROOT)/share/fish/vendor_completions.d
	$(SHELF_BIN) help --man > $(INSTALL_ROOT)/share/man/man1/shelf.1
	$(SHELF_BIN) completions bash > $(INSTALL_ROOT)/share/bash-completion/completions/shelf
	$(SHELF_BIN) completions zsh > $(INSTALL_ROOT)/share/zsh/site-functions/_shelf
	$(SHELF_BIN) completions fish > $(INSTALL_ROOT)/share/fish/vendor_completions.d/shelf.fish
	chmod 644 $(INSTALL_ROOT)/share/man/man1/shelf.1 $(INSTALL_ROOT)/share/bash-completion/completions/shelf \
	  $(INSTALL_ROOT)/share/zsh/site-functions/_shelf $(INSTALL_ROOT)/share/fish/vendor_completions.d/shelf.fish

uninstall:
	rm -f $(INSTALLED_FILES)

.build/release/shelf:
	$(MAKE) release

# dist/shelf_VERSION_ARCH.deb (scripts/make-deb.sh; contrib/debian has its maintainer scripts,
# copyright and README.Debian). The binary carries the Swift runtime, so the package needs only
# Debian's libraries; DEB_BIN=path packages another binary as it is, without building.
# scripts/deb-check.sh dist/shelf_*.deb installs, tries and purges it (as root).
DEB_BIN ?=
DEB_DIR ?= dist
deb: deps-test $(if $(DEB_BIN),,static-release)
	scripts/make-deb.sh $(or $(DEB_BIN),.build/release/shelf) $(DEB_DIR)

# dist/shelf-VERSION.oci.tar: an OCI image built from Debian's packages (mmdebstrap) and the .deb
# above, pulling from no registry (scripts/make-image.sh); `podman load -i` it, or see
# contrib/compose.yaml. `make test-image` builds it and runs it with podman (scripts/image-test.sh):
# minutes, for it downloads a Debian root, so it is not part of `make test`.
IMAGE_PACKAGES := mmdebstrap podman runc uidmap
image: deb
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(IMAGE_PACKAGES)"
	scripts/make-image.sh $$(ls -t $(DEB_DIR)/shelf_*.deb | head -1) $(DEB_DIR)

test-image: image
	$(SWIFT) build --product shelf-bench $(DEBUG_FLAGS)
	scripts/image-test.sh $$(ls -t $(DEB_DIR)/shelf-*.oci.tar | head -1) .build/debug/shelf-bench

# The release `shelf` with the Swift runtime linked in, at the path of the dynamically linked one
# `make release` builds (whichever was built last is there).
static-release: deps build-info
	$(SWIFT) build -c release --product shelf $(STATIC_SWIFT_LINK)

import Foundation
import ShelfTestSupport
import Testing

/// `shelf import-from` against the files other programs write, built as they build them by
/// `import_sources_test.py`: beets' database by real beets (PyPI, in `.venv/beets`), Navidrome's
/// from its published schema, Apple's Library.xml by Python's plistlib, a ListenBrainz export and
/// a Last.fm CSV. Each report is checked, each import is run twice (the second changes nothing),
/// and what the Navidrome import made is read back through Subsonic calls to `shelf serve`.
@Suite struct ImportFromTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(.enabled(if: TagRoundTripTests.hasMutagen, "no .venv with mutagen (make test makes it)"))
    func navidromeBeetsAppleListenBrainzAndLastfm() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            let folders = [
                ("くるり/ばらの花", "01 ばらの花.flac"), ("くるり/ばらの花", "02 ワンダーフォーゲル.flac"), ("Zeta/First", "01 Opening.flac"),
                ("Zeta/Live", "01 Opening.flac"), ("Eta/Second", "01 Second Song.flac"), ("Sigur Rós/Ágætis byrjun", "01 Svefn-g-englar.flac"),
            ]
            for (index, (folder, name)) in folders.enumerated() {
                let url = music.appendingPathComponent(folder)
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
                try TestAudio.flac(seconds: 0.3, frequency: 300 + Double(index) * 53).write(to: url.appendingPathComponent(name))
            }
            let library = dir.path("library").path
            let shelf = ChildProcess.productsDirectory().appendingPathComponent("shelf")
            let added = try ChildProcess.run(
                shelf, ["--library", library, "user", "add", "ann", "--admin", "--password-stdin"], stdin: Data("ann's secret\n".utf8))
            try #require(added.status == 0, "\(added.stderr)")
            let work = dir.path("work")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let beet = Self.repository.appendingPathComponent(".venv/beets/bin/beet")
            let result = try ChildProcess.run(
                TagRoundTripTests.python,
                [Self.repository.appendingPathComponent("Tests/import_sources_test.py").path, shelf.path, library, music.path, work.path, beet.path])
            print(result.stdout)
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr.suffix(3000))")
            var checks = [
                "the library: six tracks tagged by mutagen",
                "navidrome: users, stars, ratings, plays, a playlist, the queue and a bookmark; NFD paths under a moved folder",
                "navidrome: a Subsonic client sees the stars, ratings, playlist, queue and bookmark",
                "itunes: Library.xml with a moved folder, a catalogue track and Apple's own lists",
                "listens: ListenBrainz JSON lines and a Last.fm CSV, matched by MBID, folded names and album",
                "mistakes: a file that is not the source, a missing file, an unknown source",
            ]
            if FileManager.default.isExecutableFile(atPath: beet.path) {
                checks.append("beets: ratings (0–1 and 0–5) and plays from real beets' flexible attributes, relative paths")
            } else {
                print("ImportFromTests: beets is not installed in .venv/beets (make test installs it from PyPI); its part was skipped")
            }
            for check in checks { #expect(result.stdout.contains("ok   \(check)"), "\(check)") }
        }
    }
}

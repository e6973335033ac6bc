import Foundation
import ShelfTestSupport
import Testing

/// `.m3u8` and `.m3u` files inside the music folders become playlists, and `playlist export`
/// writes one that an import reads back to the same playlist.
@Suite struct PlaylistFileTests {
    let products = ChildProcess.productsDirectory()

    func shelf(_ arguments: [String]) throws -> ProcessResult {
        try ChildProcess.run(products.appendingPathComponent("shelf"), arguments)
    }

    @Test func playlistFilesBecomePlaylistsKeptInTheirOrder() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            // A Japanese folder name in NFD, as macOS writes them.
            let album = music.appendingPathComponent("アルバム Ä".decomposedStringWithCanonicalMapping)
            let lists = music.appendingPathComponent("lists")
            let outside = dir.path("elsewhere")
            for folder in [album, lists, outside] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
            for n in 1...3 { try TestAudio.wav(seconds: 0.2, frequency: 200 + Double(n) * 110).write(to: album.appendingPathComponent("0\(n) song.wav")) }
            try TestAudio.wav(seconds: 0.2, frequency: 1_000).write(to: outside.appendingPathComponent("x.wav"))
            let albumName = album.lastPathComponent
            let encoded = album.appendingPathComponent("01 song.wav").path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!
            let lines = [
                "#EXTM3U", "#EXTINF:1,Third", "../\(albumName.precomposedStringWithCanonicalMapping)/03 song.wav", "file://\(encoded)",
                "..\\\(albumName)\\02 song.wav",
                "missing.wav", outside.appendingPathComponent("x.wav").path, "http://radio.example/stream", "../\(albumName)/03 song.wav",
            ]
            let file = lists.appendingPathComponent("Mix.m3u8")
            try Data([0xEF, 0xBB, 0xBF] + Array(lines.joined(separator: "\r\n").utf8)).write(to: file)
            let library = dir.path("library").path
            let imported = try shelf(["--library", library, "import", music.path, "--json"])
            try #require(imported.status == 0, "\(imported.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])
            #expect(report["playlists"] as? Int == 1)
            let warnings = (report["warnings"] as? [[String: Any]] ?? []).compactMap { $0["error"] as? String }
            #expect(warnings.count == 3, "\(warnings)")
            #expect(warnings.contains { $0.contains("Mix.m3u8:6:") && $0.contains("no track") })
            #expect(warnings.contains { $0.contains("Mix.m3u8:7:") && $0.contains("outside the music folders") })
            #expect(warnings.contains { $0.contains("Mix.m3u8:8:") && $0.contains("not a local file") })

            func items() throws -> [String] {
                let shown = try shelf(["--library", library, "playlist", "show", "1", "--json"])
                try #require(shown.status == 0, "\(shown.stderr)")
                let document = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
                #expect((document["playlist"] as? [String: Any])?["name"] as? String == "Mix")
                return (document["items"] as? [[String: Any]] ?? []).compactMap {
                    (($0["track"] as? [String: Any])?["path"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent }
                }
            }
            #expect(try items() == ["03 song.wav", "01 song.wav", "02 song.wav", "03 song.wav"])

            // The same file again, changed: the same playlist follows it.
            try Data(["../\(albumName)/02 song.wav", "../\(albumName)/01 song.wav"].joined(separator: "\n").utf8).write(to: file)
            let again = try shelf(["--library", library, "import", music.path, "--json"])
            try #require(again.status == 0, "\(again.stderr)")
            #expect(try items() == ["02 song.wav", "01 song.wav"])
            let listed = try shelf(["--library", library, "playlist", "list"])
            #expect(listed.stdout.split(separator: "\n").count == 1, "\(listed.stdout)")

            // Exported relative to a folder and imported into a fresh library: the same order.
            let exported = lists.appendingPathComponent("Exported.m3u8")
            let export = try shelf(["--library", library, "playlist", "export", "1", "--relative-to", lists.path, "--output", exported.path])
            try #require(export.status == 0, "\(export.stderr)")
            let text = try String(contentsOf: exported, encoding: .utf8)
            #expect(text.hasPrefix("#EXTM3U\n#EXTINF:0,") && text.contains("\n../\(albumName)/02 song.wav\n"), "\(text)")
            try FileManager.default.removeItem(at: file)
            let fresh = dir.path("fresh").path
            let reimported = try shelf(["--library", fresh, "import", music.path, "--json"])
            try #require(reimported.status == 0, "\(reimported.stderr)")
            let shown = try shelf(["--library", fresh, "playlist", "show", "1"])
            #expect(shown.stdout.hasPrefix("Exported (2 items)"), "\(shown.stdout)")
        }
    }
}

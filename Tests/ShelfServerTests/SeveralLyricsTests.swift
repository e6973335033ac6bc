import Foundation
import ShelfTestSupport
import Testing

/// Every lyrics text a song has is offered: one ID3v2 frame per language and the `.lrc` beside
/// the file (tagged by mutagen), each its own `structuredLyrics` with its language, the first the
/// main layer and the others translations (songLyrics version 2); a repeated Vorbis `LYRICS` too.
@Suite struct SeveralLyricsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = repository.appendingPathComponent(".venv/bin/python")
    static var hasMutagen: Bool {
        FileManager.default.isExecutableFile(atPath: python.path) && ((try? ChildProcess.run(python, ["-c", "import mutagen"]).status) == 0)
    }

    @Test(.enabled(if: hasMutagen, "no .venv with mutagen (make test makes it)"))
    func eachLanguageAndTheFileBesideAreOffered() async throws {
        try await offCooperativePool {
            let script = Self.repository.appendingPathComponent("Tests/tag_files.py").path
            let fixture = try ServedLibrary { music in
                try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
                let mp3 = URL(fileURLWithPath: music).appendingPathComponent("song.mp3")
                try TestAudio.mp3(seconds: 1, seed: 3).write(to: mp3)
                let tagged = try ChildProcess.run(Self.python, [script, "tag-names", mp3.path, "Hikaru", "Kaze", "Song"])
                try #require(tagged.status == 0, "\(tagged.stderr)")
                let lyrics = try ChildProcess.run(Self.python, [script, "tag-lyrics", mp3.path, "eng=The wind is blowing", "jpn=風が吹いている"])
                try #require(lyrics.status == 0, "\(lyrics.stderr)")
                try "[la:ko]\n[00:01.00]바람이 분다\n".write(toFile: music + "/song.lrc", atomically: true, encoding: .utf8)
                let flac = URL(fileURLWithPath: music).appendingPathComponent("other.flac")
                try TestAudio.flac(seconds: 1, frequency: 550).write(to: flac)
                _ = try ChildProcess.run(Self.python, [script, "tag-names", flac.path, "Hikaru", "Kaze", "Other"])
                let vorbis = try ChildProcess.run(Self.python, [script, "tag-lyrics", flac.path, "und=First text", "und=Second text"])
                try #require(vorbis.status == 0, "\(vorbis.stderr)")
            }
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = SubsonicClient(server)
            let songs = ((try ann.ok("search3", [("query", ""), ("songCount", "10")])["searchResult3"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
            func entries(_ title: String, enhanced: Bool = false) throws -> [[String: Any]] {
                let id = try #require(songs.first { $0["title"] as? String == title }?["id"] as? String, "\(songs)")
                let answer = try ann.ok("getLyricsBySongId", [("id", id)] + (enhanced ? [("enhanced", "true")] : []))
                return ((answer["lyricsList"] as? [String: Any])?["structuredLyrics"] as? [[String: Any]]) ?? []
            }
            func text(_ entry: [String: Any]) -> String {
                ((entry["line"] as? [[String: Any]]) ?? []).compactMap { $0["value"] as? String }.joined(separator: "\n")
            }
            let song = try entries("Song", enhanced: true)
            #expect(song.count == 3, "\(song)")
            #expect(song.map(text) == ["The wind is blowing", "風が吹いている", "바람이 분다"], "\(song.map(text))")
            #expect(song.map { $0["lang"] as? String ?? "" } == ["eng", "jpn", "ko"])
            #expect(song.map { $0["kind"] as? String ?? "" } == ["main", "translation", "translation"])
            #expect(song.map { $0["synced"] as? Bool } == [false, false, true])
            let other = try entries("Other")
            #expect(other.map(text) == ["First text", "Second text"], "\(other)")
            #expect(other.allSatisfy { $0["kind"] == nil }, "kind is songLyrics version 2's")
            // A rescan of unchanged files keeps them; the track's JSON still shows the first text.
            #expect(try fixture.shelf(["import", fixture.music]).status == 0)
            #expect(try entries("Song").count == 3)
        }
    }
}

import Foundation
import ShelfTestSupport
import Testing

/// Editing one field of a file tagged the way Picard tags it leaves every other tag as it was, as
/// mutagen (an independent reader, in the project's `.venv`) sees it: lists, involved people,
/// MusicBrainz IDs, ReplayGain, unknown frames, the comment's language and the ID3v2 version.
@Suite struct TagRoundTripTests {
    let products = ChildProcess.productsDirectory()
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = repository.appendingPathComponent(".venv/bin/python")
    static let script = repository.appendingPathComponent("Tests/tag_files.py")
    static var hasMutagen: Bool {
        FileManager.default.isExecutableFile(atPath: python.path)
            && ((try? ChildProcess.run(python, ["-c", "import mutagen"]).status) == 0)
    }

    /// mutagen's view of the file: its ID3v2 version and every frame.
    func dump(_ file: URL) throws -> [String: Any] {
        let result = try ChildProcess.run(Self.python, [Self.script.path, "dump", file.path])
        try #require(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test(.enabled(if: hasMutagen, "no .venv with mutagen (make test makes it)"), arguments: [3, 4])
    func editingTheTitleOfAnMP3KeepsEveryOtherFrame(version: Int) async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
            let file = music.appendingPathComponent("08 Get Lucky.mp3")
            try TestAudio.mp3(seconds: 1).write(to: file)
            let tagged = try ChildProcess.run(Self.python, [Self.script.path, "tag-id3", file.path, "\(version)"])
            try #require(tagged.status == 0, "\(tagged.stderr)")
            let before = try dump(file)
            let library = dir.path("library").path
            let shelf = products.appendingPathComponent("shelf")
            let imported = try ChildProcess.run(shelf, ["--library", library, "import", music.path])
            try #require(imported.status == 0, "\(imported.stderr)")
            let edited = try ChildProcess.run(shelf, ["--library", library, "edit", "1", "--set", "title=Get Lucky (Radio Edit)"])
            try #require(edited.status == 0, "\(edited.stderr)")
            let after = try dump(file)
            #expect(after["version"] as? [Int] == [2, version])
            var expected = try #require(before["frames"] as? [String: Any])
            expected["TIT2"] = "Get Lucky (Radio Edit)"
            let frames = try #require(after["frames"] as? [String: Any])
            #expect(
                Set(frames.keys) == Set(expected.keys),
                "frames gone: \(Set(expected.keys).subtracting(frames.keys)), added: \(Set(frames.keys).subtracting(expected.keys))")
            for (key, value) in expected {
                #expect(sameJSON(frames[key], value), "\(key): \(frames[key] ?? "none") ≠ \(value)")
            }
        }
    }
}

/// Files tagged by mutagen as Picard tags each format: Shelf reads every value, list order, role,
/// ID and gain (compared with what `tag_files.py expected` says the format keeps), and an edit of
/// one field leaves every other tag as mutagen saw it.
@Suite struct PicardTaggedFileTests {
    let products = ChildProcess.productsDirectory()

    /// The formats, each with how its untagged audio is made.
    static let formats: [(name: String, ext: String)] = [
        ("id3v23", "mp3"), ("id3v24", "mp3"), ("flac", "flac"), ("vorbis", "ogg"), ("opus", "opus"), ("mp4", "m4a"),
        ("wavpack", "wv"),
    ]

    func audio(_ format: String, ext: String, at url: URL) throws {
        switch ext {
        case "mp3": try TestAudio.mp3(seconds: 1).write(to: url)
        case "flac": try TestAudio.flac(seconds: 1).write(to: url)
        case "opus": try TestAudio.opus(seconds: 1).write(to: url)
        default:
            let wav = url.deletingPathExtension().appendingPathExtension("source.wav")
            try TestAudio.wav(seconds: 1).write(to: wav)
            let codec = ["ogg": "libvorbis", "m4a": "alac", "wv": "wavpack"][ext]!
            try FFmpegTool.run(["-i", wav.path, "-c:a", codec, url.path])
            try FileManager.default.removeItem(at: wav)
        }
    }

    func python(_ arguments: [String]) throws -> Any {
        let result = try ChildProcess.run(TagRoundTripTests.python, [TagRoundTripTests.script.path] + arguments)
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    /// A library holding one file of `format` tagged by mutagen; the file's URL and the library path.
    func taggedLibrary(_ format: String, ext: String, in dir: TemporaryDirectory) throws -> (URL, String) {
        let music = dir.path("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        let file = music.appendingPathComponent("08 Get Lucky.\(ext)")
        try audio(format, ext: ext, at: file)
        let tagged = try ChildProcess.run(TagRoundTripTests.python, [TagRoundTripTests.script.path, "tag-full", file.path, format])
        try #require(tagged.status == 0, "\(tagged.stderr)")
        let library = dir.path("library").path
        let imported = try ChildProcess.run(products.appendingPathComponent("shelf"), ["--library", library, "import", music.path])
        try #require(imported.status == 0, "\(imported.stderr)")
        #expect(!imported.stdout.contains("warning"), "\(imported.stdout)")
        return (file, library)
    }

    func track(_ library: String) throws -> [String: Any] {
        let shown = try ChildProcess.run(products.appendingPathComponent("shelf"), ["--library", library, "track", "1", "--json"])
        try #require(shown.status == 0, "\(shown.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
    }

    @Test(.enabled(if: TagRoundTripTests.hasMutagen, "no .venv with mutagen (make test makes it)"), arguments: formats.map(\.name))
    func everyValueIsRead(format: String) async throws {
        try await offCooperativePool {
            let ext = Self.formats.first { $0.name == format }!.ext
            let dir = try TemporaryDirectory()
            let (_, library) = try taggedLibrary(format, ext: ext, in: dir)
            let got = try track(library)
            let expected = try #require(try python(["expected", format]) as? [String: Any])
            for (key, value) in expected {
                if key == "replayGain", let want = value as? [String: Double] {
                    let have = got[key] as? [String: Double] ?? [:]
                    for (part, number) in want {
                        #expect(abs((have[part] ?? .nan) - number) < 0.000_1, "\(format) replayGain.\(part): \(have[part] ?? .nan) ≠ \(number)")
                    }
                    continue
                }
                #expect(sameJSON(got[key], value is NSNull ? nil : value), "\(format) \(key): \(got[key] ?? "none") ≠ \(value)")
            }
            if ["flac", "mp4", "wavpack"].contains(format) { #expect(got["bitDepth"] as? Int == 16) }
            if ["id3v23", "id3v24", "vorbis", "opus"].contains(format) { #expect(got["bitDepth"] is NSNull) }
        }
    }

    @Test(.enabled(if: TagRoundTripTests.hasMutagen, "no .venv with mutagen (make test makes it)"), arguments: formats.map(\.name))
    func editingOneFieldKeepsEveryOtherTag(format: String) async throws {
        try await offCooperativePool {
            let ext = Self.formats.first { $0.name == format }!.ext
            let dir = try TemporaryDirectory()
            let (file, library) = try taggedLibrary(format, ext: ext, in: dir)
            let before = try #require(try python(["dump-any", file.path]) as? [String: Any])
            let shelf = products.appendingPathComponent("shelf")
            let edited = try ChildProcess.run(shelf, ["--library", library, "edit", "1", "--set", "title=Get Lucky (Radio Edit)"])
            try #require(edited.status == 0, "\(edited.stderr)")
            let after = try #require(try python(["dump-any", file.path]) as? [String: Any])
            let titleKeys: Set = ["TIT2", "TITLE", "Title", "title", "\u{A9}nam"]
            let kept = Set(before.keys).subtracting(titleKeys)
            #expect(kept.subtracting(after.keys).isEmpty, "\(format) lost \(kept.subtracting(after.keys).sorted())")
            for key in kept where after[key] != nil {
                #expect(sameJSON(after[key], before[key]), "\(format) \(key): \(after[key]!) ≠ \(before[key]!)")
            }
            let title = titleKeys.compactMap { after[$0] }.first
            #expect(sameJSON(title, ["Get Lucky (Radio Edit)"]) || sameJSON(title, "Get Lucky (Radio Edit)"), "\(format) title \(title ?? "none")")
            // The library still holds every value the file does.
            let got = try track(library)
            #expect(sameJSON(got["artists"], ["Daft Punk", "Pharrell Williams", "Nile Rodgers"]))
            #expect((got["musicBrainz"] as? [String: Any])?["releaseID"] as? String == "aa4fb7b2-8d0a-4e5b-a7d3-5b5e7a0d6f8e")
        }
    }

    @Test(.enabled(if: TagRoundTripTests.hasMutagen, "no .venv with mutagen (make test makes it)"), arguments: ["id3v23", "id3v24", "flac", "opus", "mp4"])
    func listsAreWrittenAsTheFormatWritesLists(format: String) async throws {
        try await offCooperativePool {
            let ext = Self.formats.first { $0.name == format }!.ext
            let dir = try TemporaryDirectory()
            let (file, library) = try taggedLibrary(format, ext: ext, in: dir)
            let shelf = products.appendingPathComponent("shelf")
            let edited = try ChildProcess.run(
                shelf, ["--library", library, "edit", "1", "--set", "artists=Daft Punk;Nile Rodgers", "--set", "genres=Funk;Disco;Soul"])
            try #require(edited.status == 0, "\(edited.stderr)")
            let got = try track(library)
            #expect(sameJSON(got["artists"], ["Daft Punk", "Nile Rodgers"]), "\(got["artists"] ?? "none")")
            #expect(sameJSON(got["genres"], ["Funk", "Disco", "Soul"]), "\(got["genres"] ?? "none")")
            #expect(got["genre"] as? String == "Funk")
            #expect(got["artist"] as? String == "Daft Punk feat. Pharrell Williams & Nile Rodgers", "the display credit stays")
            let tags = try #require(try python(["dump-any", file.path]) as? [String: Any])
            switch format {
            case "id3v24":
                #expect(
                    sameJSON(tags["TXXX:ARTISTS"], ["Daft Punk", "Nile Rodgers"]) || tags["TXXX:ARTISTS"] as? String == "Daft Punk\u{0}Nile Rodgers"
                        || (tags["TXXX:ARTISTS"] as? String) == "Daft Punk/Nile Rodgers", "\(tags["TXXX:ARTISTS"] ?? "none")")
            case "flac", "opus":
                #expect(sameJSON(tags["artists"] ?? tags["ARTISTS"], ["Daft Punk", "Nile Rodgers"]), "\(tags)")
                #expect(sameJSON(tags["genre"] ?? tags["GENRE"], ["Funk", "Disco", "Soul"]))
            case "mp4":
                #expect(sameJSON(tags["----:com.apple.iTunes:ARTISTS"], ["Daft Punk", "Nile Rodgers"]), "\(tags["----:com.apple.iTunes:ARTISTS"] ?? "none")")
            default: break
            }
        }
    }

    /// An artist tag with several values and no joined credit beside it (Vorbis `ARTIST=Zeta`,
    /// `ARTIST=Eta`; an ID3v2.4 `TPE1` list; an MP4 `©ART` list) names both in the display
    /// credit, joined by "; ", as well as in `artists` (it showed only Zeta).
    @Test(.enabled(if: TagRoundTripTests.hasMutagen, "no .venv with mutagen (make test makes it)"))
    func severalArtistValuesAreAllInTheDisplayCredit() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
            let formats = [("flac", "flac"), ("opus", "opus"), ("id3v24", "mp3"), ("mp4", "m4a")]
            for (format, ext) in formats {
                let file = music.appendingPathComponent("\(format).\(ext)")
                try audio(format, ext: ext, at: file)
                let tagged = try ChildProcess.run(TagRoundTripTests.python, [TagRoundTripTests.script.path, "tag-artists", file.path, "Zeta", "Eta"])
                try #require(tagged.status == 0, "\(tagged.stderr)")
            }
            let library = dir.path("library").path
            let shelf = products.appendingPathComponent("shelf")
            let imported = try ChildProcess.run(shelf, ["--library", library, "import", music.path])
            try #require(imported.status == 0, "\(imported.stderr)")
            let listed = try ChildProcess.run(shelf, ["--library", library, "tracks", "--json", "--limit", "10"])
            let page = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
            let items = try #require(page["items"] as? [[String: Any]])
            #expect(items.count == formats.count)
            for item in items {
                let id = try #require(item["id"] as? Int)
                let shown = try ChildProcess.run(shelf, ["--library", library, "track", "\(id)", "--json"])
                let track = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
                #expect(track["artist"] as? String == "Zeta; Eta", "\(track["path"] ?? id)")
                #expect(track["artists"] as? [String] == ["Zeta", "Eta"], "\(track["path"] ?? id)")
            }
        }
    }
}

/// Two JSON values compared as values.
private func sameJSON(_ a: Any?, _ b: Any?) -> Bool {
    let a = a is NSNull ? nil : a
    let b = b is NSNull ? nil : b
    guard let a, let b else { return a == nil && b == nil }
    return NSDictionary(dictionary: ["v": a]).isEqual(to: ["v": b])
}

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
    func editingTheTitleOfAnMP3KeepsEveryOtherFrame(version: Int) throws {
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
        #expect(Set(frames.keys) == Set(expected.keys), "frames gone: \(Set(expected.keys).subtracting(frames.keys)), added: \(Set(frames.keys).subtracting(expected.keys))")
        for (key, value) in expected {
            #expect(sameJSON(frames[key], value), "\(key): \(frames[key] ?? "none") ≠ \(value)")
        }
    }
}

/// Two JSON values compared as values.
private func sameJSON(_ a: Any?, _ b: Any?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    return NSDictionary(dictionary: ["v": a]).isEqual(to: ["v": b])
}

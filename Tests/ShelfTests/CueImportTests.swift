import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

/// Audio images with CUE sheets become one track per sheet track, with the sheet's names in its
/// own encoding, stable IDs, slices that export exactly, and edits written into the sheet.
@Suite struct CueImportTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = repository.appendingPathComponent(".venv/bin/python")
    static var hasMutagen: Bool {
        FileManager.default.isExecutableFile(atPath: python.path) && ((try? ChildProcess.run(python, ["-c", "import mutagen"]).status) == 0)
    }

    static func sheet(file: String, firstIndex: String = "00:00:00") -> String {
        """
        REM GENRE "J-Pop"
        REM DATE 1998
        PERFORMER "椎名林檎"
        TITLE "無罪モラトリアム"
        FILE "\(file)" WAVE
          TRACK 01 AUDIO
            TITLE "正しい街"
            PERFORMER "椎名林檎"
            ISRC JPTO09800001
            INDEX 01 \(firstIndex)
          TRACK 02 AUDIO
            TITLE "歌舞伎町の女王"
            SONGWRITER "椎名林檎"
            INDEX 00 00:02:50
            INDEX 01 00:03:00
          TRACK 03 AUDIO
            TITLE "丸の内サディスティック"
            INDEX 01 00:06:00

        """
    }

    static func titles(_ library: Library) async throws -> [String?] {
        let ids = try await library.snapshot(LibraryQuery(sort: .trackNumber))
        var titles: [String?] = []
        for id in ids { titles.append(try await library.track(id)?.title) }
        return titles
    }

    @Test(arguments: [TextEncoding.shiftJIS, .utf8BOM, .utf8])
    func anImageWithItsSheetIsOneTrackPerSheetTrack(_ encoding: TextEncoding) async throws {
        let dir = try TemporaryDirectory()
        let album = dir.path("music/album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        try TestAudio.wav(seconds: 9, frequency: 330).write(to: album.appendingPathComponent("CDImage.wav"))
        var bytes = try #require(encoding.encode(Self.sheet(file: "CDImage.wav")))
        if encoding == .utf8BOM { bytes = Data([0xEF, 0xBB, 0xBF]) + bytes }
        try bytes.write(to: album.appendingPathComponent("CDImage.cue"))
        let library = Library(directory: dir.path("lib"))
        let report = try await library.importFiles(at: [dir.path("music")])
        #expect(report.added == 3 && report.failed.isEmpty, "\(report)")
        let ids = try await library.snapshot(LibraryQuery(sort: .trackNumber))
        let tracks = try await ids.asyncMap { try #require(try await library.track($0)) }
        #expect(tracks.map(\.title) == ["正しい街", "歌舞伎町の女王", "丸の内サディスティック"])
        #expect(tracks.allSatisfy { $0.album == "無罪モラトリアム" && $0.albumArtist == "椎名林檎" && $0.year == 1998 && $0.genre == "J-Pop" })
        #expect(tracks.map(\.trackNumber) == [1, 2, 3] && tracks.allSatisfy { $0.trackCount == 3 })
        #expect(tracks[0].details.isrcs == ["JPTO09800001"] && tracks[1].composer == "椎名林檎")
        // The pregap of track 2 (INDEX 00) stays with track 1; the last runs to the image's end.
        #expect(tracks.map { $0.duration.map { ($0 * 100).rounded() / 100 } } == [3, 3, 3])
        #expect(tracks.map(\.details.cue?.start) == [0, 3, 6])
        let image = album.appendingPathComponent("CDImage.wav").path
        #expect(tracks.map(\.path) == ["#01", "#02", "#03"].map { image + $0 })
        #expect(tracks.allSatisfy { $0.filePath == image })

        // Imported again: nothing read; the sheet changed: the same IDs, the new name.
        #expect(try await library.importFiles(at: [dir.path("music")]).unchanged == 1)
        let changed = Self.sheet(file: "CDImage.wav").replacingOccurrences(of: "丸の内サディスティック", with: "丸ノ内サディスティック")
        try ((encoding == .utf8BOM ? Data([0xEF, 0xBB, 0xBF]) : Data()) + #require(encoding.encode(changed))).write(
            to: album.appendingPathComponent("CDImage.cue"))
        let again = try await library.importFiles(at: [dir.path("music")])
        #expect(again.updated == 3 && again.added == 0)
        #expect(try await library.snapshot(LibraryQuery(sort: .trackNumber)) == ids)
        #expect(try await library.track(ids[2])?.title == "丸ノ内サディスティック")

        // Editing a title writes the sheet, in its own encoding, every other line as it was.
        let before = try Data(contentsOf: album.appendingPathComponent("CDImage.cue"))
        let edit = try await library.edit([ids[1]], MetadataChanges([.title: "ギブス"]))
        #expect(edit.failed.isEmpty && edit.updated == [ids[1]], "\(edit)")
        let after = try Data(contentsOf: album.appendingPathComponent("CDImage.cue"))
        #expect(TextEncoding.detect(after) == encoding)
        let reread = try CueSheet.parse(after, name: "CDImage.cue")
        #expect(reread.tracks.map(\.title) == ["正しい街", "ギブス", "丸ノ内サディスティック"])
        #expect(after.count - before.count == (encoding.encode("ギブス")?.count ?? 0) - (encoding.encode("歌舞伎町の女王")?.count ?? 0))
        #expect(try await library.track(ids[1])?.title == "ギブス")
        // An album field is the sheet's header: refused, saying so; nothing written.
        let refused = try await library.edit([ids[1]], MetadataChanges([.album: "勝訴ストリップ"]))
        #expect(refused.failed.first?.error.contains("CUE sheet") == true, "\(refused)")
        #expect(try Data(contentsOf: album.appendingPathComponent("CDImage.cue")) == after)
        try await library.waitForMirror()
    }

    @Test func aHiddenFirstTrackAndASheetNamingAMissingFile() async throws {
        let dir = try TemporaryDirectory()
        let album = dir.path("music/album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        // The sheet names the WAV it was ripped to; the image beside it is the FLAC it became.
        try TestAudio.flac(seconds: 10, frequency: 440).write(to: album.appendingPathComponent("Album.flac"))
        try Data(Self.sheet(file: "Album.wav", firstIndex: "00:02:00").utf8).write(to: album.appendingPathComponent("Album.cue"))
        // Another sheet names a file nobody has.
        try Data(Self.sheet(file: "Lost.wav").utf8).write(to: album.appendingPathComponent("Lost.cue"))
        let library = Library(directory: dir.path("lib"))
        let report = try await library.importFiles(at: [dir.path("music")])
        #expect(report.added == 4, "\(report)")
        #expect(report.warnings.contains { $0.error.contains("Lost.cue") && $0.error.contains("'Lost.wav'") }, "\(report.warnings)")
        let ids = try await library.snapshot(LibraryQuery(sort: .trackNumber))
        let tracks = try await ids.asyncMap { try #require(try await library.track($0)) }
        #expect(tracks.map(\.trackNumber) == [0, 1, 2, 3])
        #expect(tracks[0].title == "Hidden track" && tracks[0].duration.map { ($0 * 100).rounded() / 100 } == 2)
        #expect(tracks[1].duration.map { ($0 * 100).rounded() / 100 } == 1)

        // A slice exports as a file of its own with exactly its length.
        let out = dir.path("export")
        let exported = try await library.export([ids[3]], to: out, options: ExportOptions(format: .copy))
        let file = try #require(exported.exported.first?.path)
        #expect(file.hasSuffix(".flac"))
        let tags = try TagFile.read(URL(fileURLWithPath: file))
        #expect(abs(Double(tags.durationMilliseconds) - 4_000) < 30, "\(tags.durationMilliseconds)")
        #expect(tags.properties["TITLE"] == "丸の内サディスティック")

        // The image deleted: its tracks are missing, not gone; back, whole again.
        let kept = try Data(contentsOf: album.appendingPathComponent("Album.flac"))
        try FileManager.default.removeItem(at: album.appendingPathComponent("Album.flac"))
        #expect(try await library.scanMissing().newlyMissing == 4)
        try kept.write(to: album.appendingPathComponent("Album.flac"))
        let back = try await library.scanMissing()
        #expect(back.missing.isEmpty && back.returned == 4, "\(back)")
        let returned = try await library.snapshot(LibraryQuery(sort: .trackNumber))
        // The same tracks (the exported file is a track of its own, registered by the export).
        #expect(Array(returned.prefix(4)) == ids && returned.count == 5)
        try await library.waitForMirror()
    }

    @Test func perTrackFilesOfAMultiFileSheetStayTracksAndARemovedSheetLosesNothing() async throws {
        let dir = try TemporaryDirectory()
        let album = dir.path("music/album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        // A multi-FILE rip: one file per track, the sheet naming each once.
        for (index, name) in ["01.flac", "02.flac"].enumerated() {
            try TestAudio.flac(seconds: 2, frequency: 300 + 100 * Double(index)).write(to: album.appendingPathComponent(name))
        }
        let multi =
            "TITLE \"Rip\"\nFILE \"01.flac\" WAVE\n  TRACK 01 AUDIO\n    TITLE \"A\"\n    INDEX 01 00:00:00\nFILE \"02.flac\" WAVE\n  TRACK 02 AUDIO\n    TITLE \"B\"\n    INDEX 01 00:00:00\n"
        try Data(multi.utf8).write(to: album.appendingPathComponent("Rip.cue"))
        let library = Library(directory: dir.path("lib"))
        #expect(try await library.importFiles(at: [dir.path("music")]).added == 2)
        let ids = try await library.snapshot(LibraryQuery(sort: .path))
        #expect(try await ids.asyncMap { try await library.track($0)?.details.cue }.allSatisfy { $0 == nil })

        // An image whose sheet is removed: its tracks are marked missing (kept), the image is one
        // track; the sheet back: the same tracks return and the whole-image track goes missing.
        let image = dir.path("music/image")
        try FileManager.default.createDirectory(at: image, withIntermediateDirectories: true)
        try TestAudio.wav(seconds: 9, frequency: 220).write(to: image.appendingPathComponent("CD.wav"))
        try Data(Self.sheet(file: "CD.wav").utf8).write(to: image.appendingPathComponent("CD.cue"))
        #expect(try await library.importFiles(at: [image]).added == 3)
        let cut = try await library.snapshot(LibraryQuery(filter: .text(.path, .contains("CD.wav#"))))
        #expect(cut.count == 3)
        try FileManager.default.removeItem(at: image.appendingPathComponent("CD.cue"))
        #expect(try await library.importFiles(at: [image]).added == 1)
        #expect(try await cut.asyncMap { try await library.track($0)?.missing }.allSatisfy { $0 == true })
        try Data(Self.sheet(file: "CD.wav").utf8).write(to: image.appendingPathComponent("CD.cue"))
        let again = try await library.importFiles(at: [image])
        #expect(again.updated == 3 && again.added == 0, "\(again)")
        #expect(try await cut.asyncMap { try await library.track($0)?.missing }.allSatisfy { $0 == false })
        let whole = try await library.snapshot(
            LibraryQuery(filter: .and([.text(.path, .equals(image.appendingPathComponent("CD.wav").path)), .flag(.missing, true)])))
        #expect(whole.count == 1)
        try await library.waitForMirror()
    }

    @Test(.enabled(if: hasMutagen, "no .venv with mutagen (make test makes it)"))
    func aFLACsEmbeddedSheet() async throws {
        let dir = try TemporaryDirectory()
        let image = dir.path("music/Live.flac")
        try FileManager.default.createDirectory(at: image.deletingLastPathComponent(), withIntermediateDirectories: true)
        try TestAudio.flac(seconds: 9, frequency: 550).write(to: image)
        // Tagged by mutagen, as rippers leave it: the sheet in a CUESHEET comment.
        let script = "import sys\nfrom mutagen.flac import FLAC\nf = FLAC(sys.argv[1])\nf['CUESHEET'] = sys.argv[2]\nf.save()\n"
        let tagged = try ChildProcess.run(Self.python, ["-c", script, image.path, Self.sheet(file: "Live.flac")])
        try #require(tagged.status == 0, "\(tagged.stderr)")
        let library = Library(directory: dir.path("lib"))
        #expect(try await library.importFiles(at: [dir.path("music")]).added == 3)
        #expect(try await Self.titles(library) == ["正しい街", "歌舞伎町の女王", "丸の内サディスティック"])
        let id = try #require(try await library.snapshot(LibraryQuery(sort: .trackNumber)).first)
        let refused = try await library.edit([id], MetadataChanges([.title: "x"]))
        #expect(refused.failed.first?.error.contains("embedded") == true)
        try await library.waitForMirror()
    }
}

extension Array {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

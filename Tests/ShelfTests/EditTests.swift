import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

/// An ordinary read error (not a cancellation).
struct HeldReadFailed: Error {}

@Suite(.serialized) struct EditTests {
    /// A library of `count` tagged WAVs with distinct pictures, imported.
    static func makeLibrary(_ count: Int = 2) async throws -> (TemporaryDirectory, Library, [TrackID], [URL]) {
        let dir = try TemporaryDirectory()
        var urls: [URL] = []
        for index in 0..<count {
            urls.append(
                try ImportTests.wav(
                    dir.path("music/\(index).wav"), frequency: 300 + Double(index) * 50,
                    tags: ["TITLE": "Song \(index)", "ARTIST": "Artist", "ALBUM": "Album", "LYRICS": "la la \(index)"],
                    picture: try TestPictures.jpeg(width: 90, height: 90, seed: index)))
        }
        let library = Library(directory: dir.path("library"))
        _ = try await library.importFiles(at: [dir.path("music")])
        let ids = try await library.snapshot(LibraryQuery(sort: .title))
        return (dir, library, ids, urls)
    }

    enum Change: CaseIterable { case cancel, replacePicture, deleteTrack }

    /// Seed 000's six batch-edit cases: the picture read held, then the task cancelled, the
    /// picture replaced or the track deleted, then the read succeeding or failing. Nothing is
    /// written: no file byte changes and the library keeps its values.
    @Test(arguments: Change.allCases, [true, false])
    func aBatchEditWhoseDraftBecameInvalidWritesNothing(_ change: Change, readSucceeds: Bool) async throws {
        let (dir, library, ids, urls) = try await Self.makeLibrary(1)
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let bytes = try Data(contentsOf: urls[0])
        let started = Gate()
        let gate = Gate()
        let loader = library.makeArtworkLoader(beforeRead: { _ in
            await started.open()
            await gate.wait()
            if !readSucceeds { throw HeldReadFailed() }
        })
        let edit = Task { try await library.edit(ids, MetadataChanges([.title: "Edited", .year: "1999"]), loader: loader) }
        await started.wait()
        switch change {
        case .cancel: edit.cancel()
        case .replacePicture:
            try await library.write { batch in
                let picture = try batch.addArtwork(try TestPictures.jpeg(width: 50, height: 50, seed: 77))
                try batch.updateTrack(ids[0]) { $0.artworkID = picture }
            }
        case .deleteTrack: try await library.write { try $0.deleteTrack(ids[0]) }
        }
        await gate.open()
        let result = try await edit.value
        #expect(result.updated.isEmpty && result.failed.isEmpty)
        #expect(result.skipped.map(\.id) == ids)
        #expect(try Data(contentsOf: urls[0]) == bytes, "the file is byte for byte unchanged")
        let stored = try await library.track(ids[0])
        if change == .deleteTrack { #expect(stored == nil) } else { #expect(stored?.title == "Song 0" && stored?.year == nil) }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: urls[0].deletingLastPathComponent().path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }

    @Test func theDraftFallsBackToTheFileWhenTheStoredPictureFails() async throws {
        let (dir, library, ids, _) = try await Self.makeLibrary(1)
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        try await library.write { batch in
            try batch.updateTrack(ids[0]) {
                $0.title = "Library title"
                $0.lyrics = nil
            }
        }
        let failing = library.makeArtworkLoader(beforeRead: { _ in throw HeldReadFailed() })
        let draft = try await library.editableDraft(for: ids[0], loader: failing, pictureSize: 45)
        #expect(draft.source == .file)
        #expect(draft.track.title == "Song 0" && draft.track.lyrics == "la la 0")
        #expect(draft.picture.map { ($0.width, $0.height) } ?? (0, 0) == (45, 45))
        let normal = try await library.editableDraft(for: ids[0], pictureSize: 45)
        #expect(normal.source == .library && normal.track.title == "Library title" && normal.picture?.width == 45)
        #expect(normal.fileTags?.properties["TITLE"] == "Song 0")
        // A task cancelled before it starts gets no draft.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await library.editableDraft(for: ids[0])
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
    }

    /// Every field of a file of each format edited, then the file imported into a fresh library.
    @Test func editsRoundTripThroughEveryFormat() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        let files: [(String, Data)] = [
            ("a.wav", TestAudio.wav()), ("b.aiff", TestAudio.aiff()), ("c.mp3", TestAudio.mp3(seed: 3)),
            ("d.flac", TestAudio.flac()), ("e.opus", TestAudio.opus(seed: 5)),
        ]
        for (name, data) in files {
            try data.write(to: music.appendingPathComponent(name))
            chmod(music.appendingPathComponent(name).path, 0o640)
        }
        let library = Library(directory: dir.path("library"))
        #expect(try await library.importFiles(at: [music]).added == files.count)
        let ids = try await library.snapshot(LibraryQuery(sort: .path))
        let cover = try TestPictures.jpeg(width: 70, height: 40, seed: 1)
        var values: [EditableField: String?] = [:]
        // The lists that share a tag with a display field (genres, composers) are edited on their own.
        for field in EditableField.allCases where field != .genres && field != .composers {
            values[field] =
                switch field {
                case .bpm: "120"
                case .year: "1987"
                case .trackNumber: "4"
                case .trackCount: "12"
                case .discNumber: "2"
                case .discCount: "3"
                case .compilation: "yes"
                case .rating: "80"
                default: "\(field.rawValue) — 宇多田 ü"
                }
        }
        let result = try await library.edit(ids, MetadataChanges(values, picture: .set(cover)))
        #expect(result.updated == ids && result.failed.isEmpty, "\(result.failed)")
        let fresh = Library(directory: dir.path("fresh"))
        #expect(try await fresh.importFiles(at: [music]).added == files.count)
        for track in try await fresh.page(LibraryQuery(sort: .path), limit: 10).items {
            let name = URL(fileURLWithPath: track.path).lastPathComponent
            for field in EditableField.allCases {
                guard let place = field.text else { continue }
                #expect(track[keyPath: place.keyPath] == "\(field.rawValue) — 宇多田 ü", "\(name) \(field)")
            }
            #expect(track.year == 1987 && track.trackNumber == 4 && track.trackCount == 12, "\(name)")
            for field in EditableField.allCases where field.list != nil && field != .genres && field != .composers {
                #expect(track.details[keyPath: field.list!.keyPath] == ["\(field.rawValue) — 宇多田 ü"], "\(name) \(field)")
            }
            #expect(track.details.bpm == 120 && track.details.genres == ["genre — 宇多田 ü"], "\(name)")
            #expect(track.discNumber == 2 && track.discCount == 3 && track.compilation, "\(name)")
            #expect(try await fresh.artworkData(try #require(track.artworkID)) == cover, "\(name)")
            var info = stat()
            stat(track.path, &info)
            #expect(info.st_mode & 0o777 == 0o640, "\(name) keeps its permissions")
        }
        // The library was updated too, with its own rating and play counts kept.
        let edited = try #require(try await library.track(ids[0]))
        #expect(edited.title == "title — 宇多田 ü" && edited.rating == 80 && edited.artworkID != nil)
        #expect(edited.details.artists == ["artists — 宇多田 ü"] && edited.details.bpm == 120)
        // Removing the picture and clearing a field.
        let cleared = try await library.edit([ids[0]], MetadataChanges([.lyrics: nil], picture: .remove))
        #expect(cleared.updated == [ids[0]])
        let after = try TagFile.read(URL(fileURLWithPath: edited.path))
        #expect(after.picture == nil && after.properties["LYRICS"] == nil && after.properties["TITLE"] == "title — 宇多田 ü")
        #expect(try await library.track(ids[0])?.artworkID == nil)
    }

    @Test func aFailedWriteLeavesTheOriginalAndBadChangesAreRefused() async throws {
        let (dir, library, ids, urls) = try await Self.makeLibrary(2)
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let bytes = try urls.map { try Data(contentsOf: $0) }
        // The second file is replaced by something TagLib cannot save; the first still goes in.
        try Data("not audio".utf8).write(to: urls[1])
        let result = try await library.edit(ids, MetadataChanges([.genre: "Jazz"]))
        #expect(result.updated == [ids[0]])
        #expect(result.failed.map(\.id) == [ids[1]] && result.failed.first?.path == urls[1].path)
        #expect(try Data(contentsOf: urls[1]) == Data("not audio".utf8))
        #expect(try Data(contentsOf: urls[0]) != bytes[0])
        #expect(try await library.track(ids[1])?.genre == nil)
        // A symlinked file is edited where it is; the link stays a link.
        let real = dir.path("elsewhere/real.wav")
        try FileManager.default.createDirectory(at: real.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: urls[0], to: real)
        try FileManager.default.createSymbolicLink(at: urls[0], withDestinationURL: real)
        #expect(try await library.edit([ids[0]], MetadataChanges([.genre: "Soul"])).updated == [ids[0]])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: urls[0].path) == real.path)
        #expect(try TagFile.read(real).properties["GENRE"] == "Soul")
        await #expect(throws: LibraryError.self) { try await library.edit(ids, MetadataChanges([.year: "nineteen"])) }
        await #expect(throws: LibraryError.self) { try await library.edit(ids, MetadataChanges(picture: .set(Data("no image".utf8)))) }
        // Pictures are checked as the loader reads them before any file is touched: a header
        // beyond the limits, and a well-formed header whose pixels do not decode.
        let before = try Data(contentsOf: real)
        for picture in [TestPictures.pngHeader(width: 100_000, height: 100_000), TestPictures.pngHeader(width: 64, height: 64)] {
            await #expect(throws: LibraryError.self) { try await library.edit([ids[0]], MetadataChanges(picture: .set(picture))) }
        }
        #expect(try Data(contentsOf: real) == before)
        #expect(try await library.edit([ids[0]], MetadataChanges(picture: .set(try TestPictures.png(width: 40, height: 30)))).updated == [ids[0]])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: urls[0].deletingLastPathComponent().path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }
}

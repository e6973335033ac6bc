import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

@Suite struct ImportTests {
    /// A tagged WAV file: `frequency` makes its PCM distinct.
    @discardableResult
    static func wav(_ url: URL, frequency: Double, tags: [String: String?] = [:], picture: Data? = nil, seconds: Double = 0.3) throws -> URL {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try TestAudio.wav(seconds: seconds, frequency: frequency).write(to: url)
        if !tags.isEmpty { try TagFile.write(url, tags) }
        if let picture { try TagFile.writePicture(url, picture) }
        return url
    }

    static func transactions(_ library: Library) async throws -> Int {
        try await library.changeLog(afterSeq: 0, limit: 1_000_000).reduce(into: Set<Int64>()) { $0.insert($1.transaction) }.count
    }

    @Test func threeFilesWithPicturesAreThreeTracksInOneCommitAndRoundTripEveryField() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        let covers = try (0..<3).map { try TestPictures.jpeg(width: 80, height: 80, seed: $0) }
        for index in 0..<3 {
            try Self.wav(
                music.appendingPathComponent("\(index).wav"), frequency: 300 + Double(index) * 100,
                tags: [
                    "TITLE": "曲 \(index)", "ARTIST": "宇多田ヒカル", "ARTISTSORT": "うただひかる", "ALBUM": "First Love",
                    "ALBUMARTIST": "Various", "COMPILATION": "1", "TRACKNUMBER": "\(index + 1)/3", "DISCNUMBER": "1/1",
                    "LYRICS": "line \(index)", "DATE": "1999", "GENRE": "J-Pop", "TITLESORT": "きょく \(index)",
                ], picture: covers[index])
        }
        let library = Library(directory: dir.path("lib"))
        let report = try await library.importFiles(at: [music])
        #expect(report.added == 3 && report.failed.isEmpty && report.commits == 1)
        #expect(try await Self.transactions(library) == 1, "seed 000: one save per import")
        let ids = try await library.snapshot(LibraryQuery(sort: .trackNumber))
        for (index, id) in ids.enumerated() {
            let track = try #require(try await library.track(id))
            #expect(track.title == "曲 \(index)" && track.artist == "宇多田ヒカル" && track.sortArtist == "うただひかる")
            #expect(track.sortTitle == "きょく \(index)" && track.albumArtist == "Various" && track.compilation)
            #expect(track.trackNumber == index + 1 && track.trackCount == 3 && track.discCount == 1 && track.year == 1999)
            #expect(track.lyrics == "line \(index)" && track.genre == "J-Pop" && track.codec == "pcm" && track.sampleRate == 44_100)
            #expect(track.audioHash?.hasPrefix("v1:") == true && track.fileSize > 0 && track.fileModified != nil)
            let artwork = try #require(track.artworkID)
            #expect(try await library.artworkData(artwork) == covers[index])
        }
        // Nothing changed: a rescan parses nothing and commits nothing.
        let again = try await library.importFiles(at: [music])
        #expect(again.unchanged == 3 && again.added == 0 && again.commits == 0)
        #expect(try await Self.transactions(library) == 1)
        try await library.waitForMirror()
    }

    /// An album folder's picture file gives its tracks without an embedded picture their
    /// artwork: cover, folder, front, album in that order (any case; JPEG or PNG), one stored
    /// picture shared; a file's own picture wins; a picture beyond the decoder's limits is
    /// reported with its path and passed over.
    @Test func folderPicturesStandInForMissingEmbeddedOnes() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let music = dir.path("music")
        let first = music.appendingPathComponent("Album A")
        // A folder name in NFD (カ + combining dakuten), as macOS copies leave them.
        let second = music.appendingPathComponent("ガール".decomposedStringWithCanonicalMapping)
        let third = music.appendingPathComponent("Album C")
        let cover = try TestPictures.jpeg(width: 64, height: 64, seed: 1)
        let folder = try TestPictures.png(width: 48, height: 48, seed: 2)
        let front = try TestPictures.jpeg(width: 32, height: 32, seed: 3)
        let own = try TestPictures.jpeg(width: 40, height: 40, seed: 4)
        try Self.wav(first.appendingPathComponent("1.wav"), frequency: 310)
        try Self.wav(first.appendingPathComponent("2.wav"), frequency: 320)
        try Self.wav(first.appendingPathComponent("3.wav"), frequency: 330, picture: own)
        try cover.write(to: first.appendingPathComponent("Cover.JPG"))
        try front.write(to: first.appendingPathComponent("front.jpg"))
        try Self.wav(second.appendingPathComponent("1.wav"), frequency: 340)
        try front.write(to: second.appendingPathComponent("front.jpg"))
        try folder.write(to: second.appendingPathComponent("folder.png"))
        try Self.wav(third.appendingPathComponent("1.wav"), frequency: 350)
        try TestPictures.pngHeader(width: 100_000, height: 100_000).write(to: third.appendingPathComponent("cover.png"))
        try front.write(to: third.appendingPathComponent("album.jpeg"))
        try Data("not a picture".utf8).write(to: third.appendingPathComponent("folder.jpg"))

        let library = Library(directory: dir.path("lib"))
        let report = try await library.importFiles(at: [music])
        #expect(report.added == 5 && report.failed.isEmpty)
        var pictures: [String: Data] = [:]
        for track in try await library.tracks(ids: (1...5).map { TrackID(Int64($0)) }).tracks {
            let id = try #require(track.artworkID, "\(track.path) has a picture")
            let folderName = URL(fileURLWithPath: track.path).deletingLastPathComponent().lastPathComponent
            pictures[folderName + "/" + URL(fileURLWithPath: track.path).lastPathComponent] = try await library.artworkData(id)
        }
        #expect(pictures["Album A/1.wav"] == cover && pictures["Album A/2.wav"] == cover)
        #expect(pictures["Album A/3.wav"] == own)
        #expect(pictures.first { $0.key.hasSuffix("/1.wav") && !$0.key.hasPrefix("Album") }?.value == folder)
        #expect(pictures["Album C/1.wav"] == front)
        // Two of Album A's tracks share one stored picture.
        let ids = try await library.tracks(ids: [TrackID(1), TrackID(2)]).tracks.map(\.artworkID)
        #expect(ids[0] == ids[1])
        #expect(report.warnings.map { URL(fileURLWithPath: $0.path).lastPathComponent }.sorted() == ["cover.png", "folder.jpg"], "\(report.warnings)")
        #expect(report.warnings.allSatisfy { $0.error.contains($0.path) })
    }

    /// `NAME.lrc` (else `NAME.txt`) beside `NAME.wav` gives a track without embedded lyrics its
    /// lyrics, as written (a BOM dropped), in UTF-8, UTF-16 or the Shift-JIS of a Japanese rip;
    /// embedded lyrics win; a file that is not text is reported and left out.
    @Test func lyricsFilesBesideTheAudio() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let music = dir.path("music")
        let synced = "[la:ja]\r\n[offset:+250]\r\n[00:01.50]光の中へ\r\n[00:03.00]Into the light\r\n"
        try Self.wav(music.appendingPathComponent("a.wav"), frequency: 410)
        try (Data([0xEF, 0xBB, 0xBF]) + Data(synced.utf8)).write(to: music.appendingPathComponent("a.lrc"))
        try Self.wav(music.appendingPathComponent("b.wav"), frequency: 420)
        try Data("plain words\nsecond line".utf8).write(to: music.appendingPathComponent("b.txt"))
        try Self.wav(music.appendingPathComponent("c.wav"), frequency: 430, tags: ["LYRICS": "embedded"])
        try Data("[00:01.00]from the file".utf8).write(to: music.appendingPathComponent("c.lrc"))
        try Self.wav(music.appendingPathComponent("d.wav"), frequency: 440)
        try Data([0x00, 0x01, 0x02, 0xFF, 0x00]).write(to: music.appendingPathComponent("d.lrc"))
        // 光の中へ in Shift-JIS (CP932), as Windows rippers wrote it beside a Shift-JIS .cue.
        try Self.wav(music.appendingPathComponent("e.wav"), frequency: 450)
        try Data([0x5B, 0x30, 0x30, 0x3A, 0x30, 0x31, 0x2E, 0x30, 0x30, 0x5D, 0x8C, 0xF5, 0x82, 0xCC, 0x92, 0x86, 0x82, 0xD6]).write(
            to: music.appendingPathComponent("e.lrc"))
        try Self.wav(music.appendingPathComponent("f.wav"), frequency: 460)
        try (Data([0xFF, 0xFE]) + "[00:02.00]ひかり".data(using: .utf16LittleEndian)!).write(to: music.appendingPathComponent("f.lrc"))
        let library = Library(directory: dir.path("lib"))
        let report = try await library.importFiles(at: [music])
        #expect(report.added == 6 && report.failed.isEmpty)
        var lyrics: [String: String?] = [:]
        for track in try await library.tracks(ids: (1...6).map { TrackID(Int64($0)) }).tracks {
            lyrics[URL(fileURLWithPath: track.path).lastPathComponent] = .some(track.lyrics)
        }
        #expect(lyrics["a.wav"] == .some(synced))
        #expect(lyrics["b.wav"] == .some("plain words\nsecond line"))
        #expect(lyrics["c.wav"] == .some("embedded"))
        #expect(lyrics["d.wav"] == .some(nil))
        #expect(lyrics["e.wav"] == .some("[00:01.00]光の中へ"))
        #expect(lyrics["f.wav"] == .some("[00:02.00]ひかり"))
        #expect(report.warnings.map { URL(fileURLWithPath: $0.path).lastPathComponent } == ["d.lrc"], "\(report.warnings)")
    }

    @Test func duplicatesMovesAndRetagsKeepTheTrack() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        let original = try Self.wav(music.appendingPathComponent("a/song.wav"), frequency: 440, tags: ["TITLE": "Song", "ARTIST": "A"])
        let library = Library(directory: dir.path("lib"))
        #expect(try await library.importFiles(at: [music]).added == 1)
        let id = try #require(try await library.snapshot(LibraryQuery()).first)
        try await library.write { batch in
            try batch.updateTrack(id) {
                $0.playCount = 7
                $0.rating = 80
            }
        }

        // The same PCM with other tags, elsewhere, while the first file is still there: a duplicate.
        let copy = try Self.wav(music.appendingPathComponent("b/copy.wav"), frequency: 440, tags: ["TITLE": "Other", "ARTIST": "B"])
        let second = try await library.importFiles(at: [music])
        #expect(second.duplicates == [.init(path: copy.path, existing: original.path)] && second.added == 0 && second.unchanged == 1)
        #expect(try await library.info().trackCount == 1)

        // Retagged in place: re-read, same ID, statistics kept.
        try TagFile.write(original, ["TITLE": "Song (Remastered)"])
        try FileManager.default.removeItem(at: copy)
        let retag = try await library.importFiles(at: [music])
        #expect(retag.updated == 1)
        var track = try #require(try await library.track(id))
        #expect(track.title == "Song (Remastered)" && track.playCount == 7 && track.rating == 80)

        // Moved (renamed into another folder): the track takes the new path.
        let moved = music.appendingPathComponent("c/renamed.wav")
        try FileManager.default.createDirectory(at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: original, to: moved)
        let move = try await library.importFiles(at: [music])
        #expect(move.moved == 1 && move.added == 0)
        track = try #require(try await library.track(id))
        #expect(track.path == moved.path && track.playCount == 7 && track.title == "Song (Remastered)")
        #expect(try await library.info().trackCount == 1)

        // A duplicate can be imported on purpose.
        try Self.wav(music.appendingPathComponent("d/again.wav"), frequency: 440)
        #expect(try await library.importFiles(at: [music], options: ImportOptions(importDuplicates: true)).added == 1)

        // Files gone: reported, then pruned.
        try FileManager.default.removeItem(at: moved)
        let missing = try await library.scanMissing()
        #expect(missing.missing.map(\.id) == [id] && missing.newlyMissing == 1)
        #expect(try await library.track(id)?.missing == true)
        #expect(try await library.scanMissing(prune: true).pruned == 1)
        #expect(try await library.track(id) == nil)
        try await library.waitForMirror()
    }

    @Test func badFilesAreReportedAndTheRestImported() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        var expected = 0
        // Every format, tagged and with a picture, truncated at several offsets.
        for format in FormatRoundTripTests.Format.allCases {
            let source = dir.path("source.\(format.rawValue)")
            try FormatRoundTripTests.bytes(format, seed: 5).write(to: source)
            try TagFile.write(source, ["TITLE": "Valid", "LYRICS": "ok", "ARTIST": "宇多田"])
            try TagFile.writePicture(source, try TestPictures.jpeg(width: 40, height: 40))
            let bytes = try Data(contentsOf: source)
            for cut in Set([0, 3, 11, 40, 100, 700, bytes.count / 3, bytes.count / 2, bytes.count - 9]) {
                try bytes.prefix(cut).write(to: music.appendingPathComponent("cut-\(cut).\(format.rawValue)"))
                expected += 1
            }
        }
        var random = SeededRandom(seed: 77)
        for ext in ["mp3", "flac", "m4a", "ogg", "opus", "wv", "ape", "wma", "aiff", "wav"] {
            try Data((0..<3_000).map { _ in UInt8(random.int(0...255)) }).write(to: music.appendingPathComponent("noise.\(ext)"))
            expected += 1
        }
        // An ID3v2 header claiming far more bytes than the file has, in front of real frames.
        var lying = Data([0x49, 0x44, 0x33, 4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F])
        lying.append(TestAudio.mp3(seconds: 0.2, seed: 99))
        try lying.write(to: music.appendingPathComponent("lying-id3.mp3"))
        // Invalid UTF-8 in a Vorbis comment, and a picture of garbage.
        let odd = music.appendingPathComponent("odd.flac")
        try TestAudio.flac(seconds: 0.2, frequency: 777).write(to: odd)
        try TagFile.write(odd, ["TITLE": "ok"])
        try TagFile.writePicture(odd, Data("not a picture".utf8))
        var oddBytes = try Data(contentsOf: odd)
        let titleRange = try #require(oddBytes.range(of: Data("TITLE=ok".utf8)))
        oddBytes.replaceSubrange(titleRange, with: Data("TITLE=".utf8) + Data([0xFF, 0xFE]))  // same length, not UTF-8
        try oddBytes.write(to: odd)
        expected += 2
        for index in 0..<3 { try Self.wav(music.appendingPathComponent("good-\(index).wav"), frequency: 200 + Double(index) * 50) }
        expected += 3
        try Data("cover".utf8).write(to: music.appendingPathComponent("cover.jpg"))  // not audio: not counted
        try Self.wav(music.appendingPathComponent(".hidden.wav"), frequency: 999)  // hidden: skipped

        let library = Library(directory: dir.path("lib"))
        let report = try await library.importFiles(at: [music], options: ImportOptions(chunkSize: 7))
        #expect(report.added + report.failed.count + report.duplicates.count == expected, "\(report)")
        #expect(report.added >= 3 && report.failed.count >= 30)
        for failure in report.failed { #expect(failure.error.contains(failure.path), "\(failure)") }
        #expect(!report.failed.contains { $0.path.contains("good-") })
        #expect(try await library.info().trackCount == report.added)
        try await library.waitForMirror()
    }

    @Test func theScannerFindsAudioByContentSkipsHiddenAndSurvivesLinkLoops() throws {
        let dir = try TemporaryDirectory()
        let root = dir.path("root")
        try Self.wav(root.appendingPathComponent("x/a.wav"), frequency: 300)
        try TestAudio.wav().write(to: root.appendingPathComponent("x/no-extension"))
        try Data("text".utf8).write(to: root.appendingPathComponent("x/notes"))
        try Self.wav(root.appendingPathComponent(".hidden/b.wav"), frequency: 301)
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("x/loop"), withDestinationURL: root)
        var scanner = AudioScanner([root])
        var found: [String] = []
        while let file = scanner.next() { found.append(file.url.lastPathComponent) }
        #expect(found.sorted() == ["a.wav", "no-extension"])
    }

    @Test func identityIgnoresTagsAndSamplesLargePayloads() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.wav(dir.path("a.wav"), frequency: 330)
        let before = try AudioIdentity.of(url)
        try TagFile.write(url, ["TITLE": String(repeating: "long title ", count: 200)])
        try TagFile.writePicture(url, try TestPictures.jpeg(width: 50, height: 50))
        #expect(try AudioIdentity.of(url) == before)
        let other = try Self.wav(dir.path("b.wav"), frequency: 331)
        #expect(try AudioIdentity.of(other) != before)
        // 3 s of stereo 16-bit audio is over 1 MiB: sampled, and still tag-blind.
        let large = try Self.wav(dir.path("large.wav"), frequency: 330, seconds: 3)
        let sampled = try AudioIdentity.of(large)
        try TagFile.write(large, ["ARTIST": "Someone"])
        #expect(try AudioIdentity.of(large) == sampled && sampled != before)
        // An Ogg file whose comment header spans pages (a picture of a few hundred KB, as taggers
        // embed them): the header's continuation pages carry granule -1, and are tags, not audio.
        let opus = dir.path("c.opus")
        try TestAudio.opus(seconds: 0.4, seed: 9).write(to: opus)
        let bare = try AudioIdentity.of(opus)
        try TagFile.writePicture(opus, try DatasetGenerator.picture(side: 600, index: 1, noise: true))
        #expect(try Data(contentsOf: opus).count > 150_000, "the picture spans several pages")
        #expect(try AudioIdentity.of(opus) == bare)
        try TagFile.writePicture(opus, try DatasetGenerator.picture(side: 700, index: 2, noise: true))
        try TagFile.write(opus, ["TITLE": "retitled"])
        #expect(try AudioIdentity.of(opus) == bare)
    }

    /// A chunk is cut at its byte budget as well as its file count: each is a transaction.
    @Test func chunksAreCutByBytesAsWellAsFiles() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        var sizes: [Int] = []
        for index in 0..<5 {
            let url = try Self.wav(music.appendingPathComponent("\(index).wav"), frequency: 300 + Double(index) * 10)
            sizes.append(try Data(contentsOf: url).count)
        }
        let library = Library(directory: dir.path("lib"))
        // Two files' bytes a chunk: three transactions for five files (500 files would be one).
        let report = try await library.importFiles(at: [music], options: ImportOptions(chunkBytes: Int64(sizes[0] + 1)))
        #expect(report.added == 5 && report.commits == 3, "\(report.commits) commits")
    }

    /// A library made before Ogg header pages were told from audio holds such a file under its
    /// old identity: moved, it is still the same track (its plays kept), and takes the new one.
    @Test func anOggFileStoredUnderItsOldIdentityIsStillRecognisedWhenMoved() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        let original = music.appendingPathComponent("a/song.opus")
        try FileManager.default.createDirectory(at: original.deletingLastPathComponent(), withIntermediateDirectories: true)
        try TestAudio.opus(seconds: 0.4, seed: 21).write(to: original)
        try TagFile.write(original, ["TITLE": "Song", "ARTIST": "A"])
        try TagFile.writePicture(original, try DatasetGenerator.picture(side: 600, index: 3, noise: true))
        let (current, legacy) = try AudioIdentity.identities(original)
        let old = try #require(legacy, "the picture spans pages, so the old rule hashed some of it")
        #expect(old != current)
        let library = Library(directory: dir.path("lib"))
        #expect(try await library.importFiles(at: [music]).added == 1)
        let id = try #require(try await library.snapshot(LibraryQuery()).first)
        try await library.write { batch in try batch.updateTrack(id) { $0.playCount = 3 } }
        // As the earlier version stored it.
        let db = try Connection(path: library.storeURL.path)
        try db.execute("UPDATE track SET audio_hash = ? WHERE id = ?", [old, id.rawValue])
        let moved = music.appendingPathComponent("b/renamed.opus")
        try FileManager.default.createDirectory(at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: original, to: moved)
        let move = try await library.importFiles(at: [music])
        #expect(move.moved == 1 && move.added == 0)
        let track = try #require(try await library.track(id))
        #expect(track.path == moved.path && track.playCount == 3 && track.audioHash == current)
    }
}

@Suite struct FormatRoundTripTests {
    enum Format: String, CaseIterable { case wav, aiff, mp3, flac, opus }

    static func bytes(_ format: Format, seed: Int) -> Data {
        switch format {
        case .wav: TestAudio.wav(seconds: 0.4, frequency: 200 + Double(seed))
        case .aiff: TestAudio.aiff(seconds: 0.4, frequency: 200 + Double(seed))
        case .mp3: TestAudio.mp3(seconds: 0.4, seed: UInt64(seed))
        case .flac: TestAudio.flac(seconds: 0.4, frequency: 200 + Double(seed))
        case .opus: TestAudio.opus(seconds: 0.4, seed: UInt64(seed))
        }
    }

    /// Every field, sort tag and the picture written with TagLib come back through an import.
    @Test(arguments: Format.allCases)
    func tagsAndPictureSurviveAnImport(_ format: Format) async throws {
        let dir = try TemporaryDirectory()
        let url = dir.path("music/song.\(format.rawValue)")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.bytes(format, seed: 1).write(to: url)
        let fields: [String: String] = [
            "TITLE": "夜に駆ける", "ARTIST": "YOASOBI", "ALBUM": "THE BOOK", "ALBUMARTIST": "Various Artists", "COMPOSER": "Ayase",
            "GENRE": "J-Pop", "DATE": "2021", "TRACKNUMBER": "2/10", "DISCNUMBER": "1/2", "COMPILATION": "1",
            "TITLESORT": "よるにかける", "ARTISTSORT": "よあそび", "ALBUMSORT": "BOOK, THE", "ALBUMARTISTSORT": "Various",
            "COMPOSERSORT": "あやせ", "LYRICS": "沈むように\nline 2", "COMMENT": "a comment",
        ]
        try TagFile.write(url, fields)
        let cover = try TestPictures.png(width: 32, height: 32, seed: 4)
        try TagFile.writePicture(url, cover, mimeType: "image/png")

        let library = Library(directory: dir.path("lib"))
        try await library.disableMirror()
        let report = try await library.importFiles(at: [url.deletingLastPathComponent()])
        #expect(report.added == 1, "\(format): \(report.failed)")
        let id = try #require(try await library.snapshot(LibraryQuery()).first)
        let track = try #require(try await library.track(id))
        #expect(track.title == "夜に駆ける" && track.artist == "YOASOBI" && track.album == "THE BOOK", "\(format)")
        #expect(track.albumArtist == "Various Artists" && track.composer == "Ayase" && track.genre == "J-Pop" && track.year == 2021)
        #expect(track.trackNumber == 2 && track.trackCount == 10 && track.discNumber == 1 && track.discCount == 2, "\(format)")
        #expect(track.compilation, "\(format) compilation")
        #expect(track.sortTitle == "よるにかける" && track.sortArtist == "よあそび" && track.sortAlbum == "BOOK, THE", "\(format)")
        #expect(track.sortAlbumArtist == "Various" && track.sortComposer == "あやせ", "\(format)")
        #expect(track.lyrics == "沈むように\nline 2" && track.comment == "a comment", "\(format)")
        #expect(track.codec == (format == .aiff || format == .wav ? "pcm" : format.rawValue) && (track.duration ?? 0) > 0.2, "\(format)")
        let artwork = try #require(track.artworkID, "\(format) picture")
        #expect(try await library.artworkData(artwork) == cover)
        // A retag keeps the audio identity: the same file is recognised.
        let identity = track.audioHash
        try TagFile.write(url, ["TITLE": "Another title, much longer than before, so the tag grows"])
        #expect(try AudioIdentity.of(url) == identity, "\(format)")
    }
}

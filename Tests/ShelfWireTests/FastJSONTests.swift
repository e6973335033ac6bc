import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import ShelfWire
import Testing

/// The fast writers must give JSONEncoder's bytes exactly: `--json` and `/api/` are contracts.
@Suite struct FastJSONTests {
    /// Both paths for `value`, which must be byte-identical (compared as text for readable failures).
    private func expectSame<T: FastJSONEncodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let slow = try Wire.slowEncode(value)
        let fast = try #require(Wire.fastEncode(value), sourceLocation: sourceLocation)
        #expect(String(decoding: fast, as: UTF8.self) == String(decoding: slow, as: UTF8.self), sourceLocation: sourceLocation)
        #expect(fast == slow, sourceLocation: sourceLocation)
        #expect(try Wire.encode(value) == slow, sourceLocation: sourceLocation)
    }

    /// A track with every optional set, to vary one field at a time.
    private static func full(_ id: Int64 = 42) -> Track {
        Track(
            id: TrackID(id), path: "/music/a/b.flac", fileSize: 31_415_926, fileModified: Date(timeIntervalSince1970: 1_700_000_000.75),
            title: "Title", artist: "Artist", album: "Album", albumArtist: "Album Artist", composer: "Composer",
            genre: "Genre", year: 1999, trackNumber: 3, trackCount: 12, discNumber: 1, discCount: 2, duration: 215.5,
            bitrate: 1_411, sampleRate: 44_100, channels: 2, codec: "FLAC", compilation: true, comment: "c", lyrics: "l",
            sortTitle: "st", sortArtist: "sa", sortAlbum: "sal", sortAlbumArtist: "saa", sortComposer: "sc",
            artworkID: ArtworkID(UUID(uuidString: "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9")!),
            dateAdded: Date(timeIntervalSince1970: 1_796_116_468), dateModified: Date(timeIntervalSince1970: 1_796_116_469.999_999),
            playCount: 7, skipCount: 1, lastPlayed: Date(timeIntervalSince1970: 1_796_000_000), rating: 80, audioHash: "ab12/cd34",
            details: fullDetails)
    }

    /// Details with every kind of value: lists, a contributor with and without a part, IDs, a gain
    /// with one part missing.
    private static var fullDetails: TrackDetails {
        var d = TrackDetails()
        d.artists = ["A", "B \"quoted\""]
        d.albumArtists = ["A"]
        d.genres = ["Rock", "日本"]
        d.contributors = [Contributor(role: "conductor", name: "C"), Contributor(role: "performer", subRole: "guitar", name: "G")]
        d.musicBrainz = MusicBrainzIDs(recordingID: "r", artistIDs: ["a1", "a2"], acoustID: "x")
        d.replayGain = ReplayGain(trackGain: -6.25, trackPeak: 0.98765, albumGain: nil, albumPeak: 1)
        d.originalDate = "1969-09"
        d.bpm = 120
        d.bitDepth = 24
        d.isrcs = ["USX1"]
        return d
    }

    @Test func everyGeneratedTrackEncodesAlikeAlsoListedAndInPages() throws {
        var tracks = DatasetGenerator(tracks: 3_000, seed: 11).allTracks()
        for index in tracks.indices {
            // The generator leaves what the store assigns unset: give IDs, pictures, plays and file times.
            tracks[index].id = TrackID(Int64(index + 1))
            if index % 3 == 0 { tracks[index].artworkID = ArtworkID() }
            if index % 4 == 0 { tracks[index].lastPlayed = Date(timeIntervalSince1970: 1_600_000_000 + Double(index) * 997.123) }
            if index % 5 == 0 { tracks[index].fileModified = Date(timeIntervalSince1970: 1_500_000_000 + Double(index) * 61.5) }
        }
        for track in tracks { try expectSame(track) }
        let listed = tracks.enumerated().map { ListedTrack(track: $1, section: ["A", "Z", "#", "あ", "\"\\"][$0 % 5]) }
        for row in listed { try expectSame(row) }
        for start in stride(from: 0, to: listed.count, by: 50) {
            let items = Array(listed[start..<min(start + 50, listed.count)])
            try expectSame(PageResult(items: items, nextCursor: start + 50 < listed.count ? "c\(start)/x" : nil, total: listed.count))
        }
        try expectSame(PageResult<ListedTrack>(items: [], nextCursor: nil, total: 0))
    }

    @Test func emptyAndFullTracks() throws {
        try expectSame(Track(path: ""))
        try expectSame(Track(path: "/x", dateAdded: Date(timeIntervalSince1970: 0)))
        try expectSame(Self.full())
        try expectSame(ListedTrack(track: Self.full(), section: "K"))
        try expectSame(ListedTrack(track: Track(path: "/x"), section: ""))
    }

    @Test func keysAreWrittenOnceInByteOrder() throws {
        let text = String(decoding: try #require(Wire.fastEncode(ListedTrack(track: Self.full(), section: "S"))), as: UTF8.self)
        // The top level's keys in order: a string right after `{` or `,` at depth 1.
        var keys: [String] = []
        var depth = 0
        var inString = false
        var escaped = false
        var keyNext = false
        var current = ""
        for character in text {
            if inString {
                if escaped {
                    escaped = false
                    current.append(character)
                    continue
                }
                if character == "\\" {
                    escaped = true
                    continue
                }
                if character == "\"" {
                    inString = false
                    if keyNext { keys.append(current) }
                    keyNext = false
                    continue
                }
                current.append(character)
                continue
            }
            switch character {
            case "\"":
                inString = true
                current = ""
            case "{", "[":
                depth += 1
                keyNext = character == "{" && depth == 1
            case "}", "]": depth -= 1
            case ",": keyNext = depth == 1
            default: break
            }
        }
        #expect(keys.count == 63)  // Track's 40 (hasArtwork, missing and cue included), the 22 of its details, and section
        #expect(Set(keys).count == keys.count)
        #expect(keys == keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(keys.prefix(5) == ["album", "albumArtist", "albumArtists", "albumVersion", "artist"])
    }

    @Test func stringsEscapeAsJSONEncoderDoes() throws {
        let controls = String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })
        let strings = [
            controls, "\u{0}", "\u{1F}", "a\nb\tc\rd", "\"quoted\"", "back\\slash\\", "/path/with/slashes/", "\u{7F}\u{80}\u{9F}",
            "😀👩‍👩‍👧‍👦🇯🇵", "日本語のタイトル", "e\u{301}\u{0308}\u{20DD}", "\u{2028}\u{2029}\u{FEFF}\u{FFFD}", "ｆｕｌｌ", "",
            String(repeating: "long \"x\" ", count: 500),
        ]
        for string in strings {
            var track = Self.full()
            track.title = string
            track.path = string
            track.lyrics = string + string
            try expectSame(track)
            try expectSame(ListedTrack(track: track, section: string))
        }
    }

    @Test func doublesIntegersAndDatesFormatAsJSONEncoderDoes() throws {
        var doubles: [Double] = [
            0, -0.0, 3, 215.5, 0.1, 1e-7, 2.5e-5, 1_234_567.891, 1e15, 9_007_199_254_740_992, 9_007_199_254_740_992.0.nextUp, 1e16,
            12_345_678_901_234_568, 1e300, -1e300, .greatestFiniteMagnitude, .leastNormalMagnitude, .leastNonzeroMagnitude,
            -.leastNonzeroMagnitude, 1.0 / 3, 100, 1e21, 1e22, 0.000_1, 0.001,
        ]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let double = Double(bitPattern: random.next())
            if double.isFinite { doubles.append(double) }
            doubles.append(Double(Int.random(in: 0...10_000_000)) / 1_000)
        }
        for double in doubles {
            var track = Self.full()
            track.duration = double
            try expectSame(track)
        }
        // Every digit count, either side of each power of ten, and random values.
        let powers = (0...18).map { Int(pow(10.0, Double($0)).rounded()) }
        let boundaries = powers.flatMap { [$0 - 1, $0, $0 + 1, -$0, -($0 - 1)] }
        for int in [Int.min, Int.min + 1, Int.max, Int.max - 1, -1, 0, 9, 10, 99, 100] + boundaries + (0..<200).map({ _ in Int.random(in: .min ... .max) }) {
            var track = Self.full(Int64(int))
            (track.year, track.playCount, track.rating, track.fileSize) = (int, int, int, Int64(int))
            try expectSame(track)
        }
        let dates: [Date] =
            [
                Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.5), Date(timeIntervalSince1970: -1),
                Date(timeIntervalSince1970: 1_796_116_468.999_999_9), Date(timeIntervalSinceReferenceDate: 0.999_999_999_99),
                Date(timeIntervalSinceReferenceDate: -0.000_000_1), Date(timeIntervalSince1970: 951_782_400),  // 2000-02-29
                Date(timeIntervalSince1970: 4_107_456_000),  // 2100-02-28, not a leap year after
                .distantPast, .distantFuture, Date(timeIntervalSince1970: -62_135_596_800), Date(timeIntervalSince1970: -62_135_596_800.5),
                Date(timeIntervalSince1970: 253_402_300_799.9), Date(timeIntervalSince1970: 253_402_300_800),
                Date(timeIntervalSince1970: -94_608_000_000), Date(timeIntervalSince1970: 1e12),
                // Either side of the Gregorian reform: Foundation writes Julian dates before 1582-10-15.
                Date(timeIntervalSince1970: -12_219_292_800), Date(timeIntervalSince1970: -12_219_292_800.5),
                Date(timeIntervalSince1970: -12_219_292_801), Date(timeIntervalSince1970: -12_219_379_200),
            ] + (0..<2_000).map { _ in Date(timeIntervalSince1970: Double.random(in: -62_135_596_800...253_402_300_800)) }
        for date in dates {
            var track = Self.full()
            (track.dateAdded, track.lastPlayed, track.fileModified) = (date, date, date)
            try expectSame(track)
        }
    }

    @Test func aDoubleJSONEncoderRefusesFallsBackToItsError() throws {
        for double in [Double.nan, .infinity, -.infinity] {
            var track = Self.full()
            track.duration = double
            #expect(Wire.fastEncode(track) == nil)
            #expect(throws: EncodingError.self) { try Wire.encode(track) }
        }
    }
}

import Foundation
import Testing

@testable import Shelf
@testable import ShelfCore
@testable import ShelfServer

/// What shelf-fuzz found in the parsers of outside input, each as the input that showed it.
@Suite struct FuzzFindingsTests {
    static let proxies = TrustedProxies([IPNetwork("10.0.0.0/8")!])

    /// A client's unclosed quote in `Forwarded` swallowed the hop its proxy appended, so the
    /// client chose its own address (and so its sign-in limit).
    @Test func anUnclosedQuoteCannotSwallowTheProxysHop() {
        let client = Self.proxies.client(peer: "10.0.0.1", headers: ["forwarded": "for=\"x, for=198.51.100.23"], isTLS: false)
        #expect(client.address == "198.51.100.23")
        #expect(TrustedProxies.forwardedElements("for=\"x, for=192.0.2.1;proto=https").last?["proto"] == "https")
    }

    /// X-Forwarded-For ending in a prepending mark (U+0600) made one character of it and the
    /// comma the proxy appended, which hid the proxy's hop.
    @Test func aPrependingMarkCannotJoinTheProxysComma() {
        let forged = "203.0.113.9\u{0600}, 198.51.100.23"
        #expect(forged.split(separator: ",").count == 1, "the fault: Character splitting sees one value")
        let client = Self.proxies.client(peer: "10.0.0.1", headers: ["x-forwarded-for": forged], isTLS: false)
        #expect(client.address == "198.51.100.23")
        let viaForwarded = Self.proxies.client(peer: "10.0.0.1", headers: ["forwarded": "for=x\u{0600}, for=198.51.100.23"], isTLS: false)
        #expect(viaForwarded.address == "198.51.100.23")
    }

    /// `enc:+f` decoded to a password: `UInt8(_:radix:)` takes a sign.
    @Test func anEncodedPasswordIsHexDigitsOnly() throws {
        #expect(throws: SubsonicError.self) { try SubsonicAPI.decodePassword("enc:+f") }
        #expect(throws: SubsonicError.self) { try SubsonicAPI.decodePassword("enc:-1") }
        #expect(try SubsonicAPI.decodePassword("enc:616E6e") == "ann")
    }

    /// A strict bound past the largest double became +∞, which a smart playlist cannot store.
    @Test func aStrictBoundAtTheLargestNumberIsRefused() throws {
        #expect(throws: FilterParseError.self) { try FilterParser.parse("year:>1.7976931348623157e308") }
        let filter = try FilterParser.parse("year:>1e300")
        #expect(try SmartRules(.filter(filter)).json().isEmpty == false)
    }

    /// A date bound was read by a `DateFormatter` made per bound, which leaks 128 bytes a call for
    /// some malformed text (this one, from the smart-rule target; `make fuzz` replays it under
    /// LeakSanitizer). Dates are read by hand now, and must mean the same days as before.
    @Test func aMalformedDateBoundIsRefusedWithoutFoundationsFormatter() throws {
        let found = try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz/crashes/smart-rule/malformed-date-bound-leaks-128-bytes-in-Foundation-DateFormatter"))
        #expect(throws: FilterParseError.self) { try SmartRules.parseCondition(String(decoding: found, as: UTF8.self)) }
        // Every day from 1969 to 2100 starts where Foundation's calendar says it does.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var day = try #require(calendar.date(from: DateComponents(year: 1969, month: 1, day: 1)))
        while calendar.component(.year, from: day) <= 2100 {
            let parts = calendar.dateComponents([.year, .month, .day], from: day)
            let text = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            #expect(FilterParser.dayStart(Substring(text)) == day.timeIntervalSince1970, "\(text)")
            day = day.addingTimeInterval(86_400)
        }
        #expect(try FilterParser.parse("dateAdded:2024-1-5") == .range(.dateAdded, lower: 1_704_412_800, upper: 1_704_499_199))
        #expect(try FilterParser.parse("dateAdded:>=2000-02-29") == .range(.dateAdded, lower: 951_782_400, upper: nil))
        for wrong in [
            "2023-02-29", "1900-02-29", "2024-13-01", "2024-00-10", "2024-04-31", "0000-01-01", "24-01-01", "2024-001-01", "+024-01-01", "2024-01-01-",
            "2024--1-01", "２０２４-01-01",
        ] {
            #expect(FilterParser.dayStart(Substring(wrong)) == nil, "\(wrong)")
            #expect(throws: FilterParseError.self, "\(wrong)") { try FilterParser.parse("dateAdded:>\(wrong)") }
        }
    }

    /// An MP4 box, a DSF chunk or a DSDIFF chunk claiming a 64-bit length near 2⁶³ overflowed the
    /// walker's offset and trapped, which would have stopped an import at one hostile file.
    @Test func aChunkOfTheLargestLengthEndsTheWalk() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-fuzz-identity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func bytes(_ value: Int64, littleEndian: Bool) -> [UInt8] {
            (0..<8).map { UInt8(truncatingIfNeeded: value >> (littleEndian ? $0 * 8 : (7 - $0) * 8)) }
        }
        let found = try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz/crashes/identity/mp4-box-of-largest-64-bit-length-overflowed-the-offset"))
        let dsf =
            Array("DSD ".utf8) + bytes(28, littleEndian: true) + bytes(4_096, littleEndian: true) + bytes(0, littleEndian: true)
            + Array("fmt ".utf8) + bytes(.max, littleEndian: true) + [UInt8](repeating: 7, count: 64)
        let dff =
            Array("FRM8".utf8) + bytes(4_096, littleEndian: false) + Array("DSD ".utf8)
            + Array("FVER".utf8) + bytes(.max, littleEndian: false) + [UInt8](repeating: 7, count: 64)
        for (name, content) in [("found.m4a", found), ("huge.dsf", Data(dsf)), ("huge.dff", Data(dff))] {
            let file = folder.appendingPathComponent(name)
            try content.write(to: file)
            // The whole file is the payload when no audio chunk is found within it.
            let identity = try AudioIdentity.identities(file)
            #expect(identity.current.contains(":"), "\(name): \(identity.current)")
        }
        #expect(AudioIdentity.past(28, .max, within: 100) == 100 && AudioIdentity.past(28, 8, within: 100) == 36)
    }

    /// A feed whose namespace URI was not UTF-8 made Foundation's XMLParser trap: one hostile
    /// podcast feed stopped the server. Such a feed is refused first; a feed in a declared
    /// encoding other than UTF-8 still reads.
    @Test func aFeedThatIsNotUTF8IsRefusedBeforeTheParser() throws {
        let found = try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz/crashes/podcast/namespace-uri-not-utf-8-trapped-Foundation-XMLParser"))
        #expect(throws: PodcastFeedError.self) { try PodcastFeed.parse(found) }
        let latin1 = Data(
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss version=\"2.0\"><channel><title>Caf\u{E9}</title></channel></rss>"
                .data(using: .isoLatin1)!)
        #expect(try PodcastFeed.parse(latin1).title == "Café")
        let undeclared = Data("<rss version=\"2.0\"><channel><title>Caf".utf8) + Data([0xE9]) + Data("</title></channel></rss>".utf8)
        #expect(PodcastFeed.firstInvalidUTF8(undeclared) == 38)
        #expect(throws: PodcastFeedError("the feed is not valid UTF-8 (byte 38), the encoding it declares or XML assumes without one")) {
            try PodcastFeed.parse(undeclared)
        }
        // The second finding: an encoding name libxml2 does not know ("u~tf-8") and bytes that are no UTF-8.
        let unknown =
            Data("<?xml version=\"1.0\" encoding=\"u~tf-8\"?><rss version=\"2.0\"><channel><title>A</title><i".utf8)
            + Data(repeating: 0xFF, count: 8) + Data("/></channel></rss>".utf8)
        #expect(throws: PodcastFeedError.self) { try PodcastFeed.parse(unknown) }
        // The third: a processing instruction with nothing in it, which XMLParser read as a C string.
        let empty = Data("<rss version=\"2.0\"><channel><?x?><title>A</title><?y ?></channel></rss>".utf8)
        #expect(try PodcastFeed.parse(empty).title == "A")
        #expect(PodcastFeed.declaredEncoding(Array("<?xml version='1.0' encoding = 'UTF-8'?><rss/>".utf8)) == "UTF-8")
        let cp1252 =
            Data("<?xml version='1.0' encoding='windows-1252'?><rss version='2.0'><channel><title>".utf8) + Data([0x80])
            + Data("</title></channel></rss>".utf8)
        #expect(try PodcastFeed.parse(cp1252).title == "€")
    }

    /// An item date whose text ran into a combining mark ("Mon, 01" and U+05BB) made Foundation's
    /// DateFormatter trap: one hostile feed stopped the server (the fourth podcast finding). Feed
    /// dates are read by Shelf (`InternetDate`); the item stays, without a date, and a Last.fm
    /// export's date of that kind is no date either.
    @Test func aFeedDateThatRunsIntoACombiningMarkIsNoDate() throws {
        let found = try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz/crashes/podcast/pub-date-into-a-combining-mark-trapped-Foundation-DateFormatter"))
        _ = try? PodcastFeed.parse(found)
        let feed = try PodcastFeed.parse(
            Data(
                ("<rss version=\"2.0\"><channel><title>A</title><item><guid>1</guid><pubDate>Mon, 01\u{5BB}eg 2026</pubDate></item>"
                    + "<item><guid>2</guid><pubDate>Tue, 01 Dec 2026 08:56:01 GMT</pubDate></item></channel></rss>").utf8))
        #expect(feed.items.map(\.guid) == ["1", "2"])
        #expect(feed.items.map(\.published) == [nil, Date(timeIntervalSince1970: 1_796_115_361)])
        #expect(ListenExportReader.date("31\u{301}Jan 2021 12:34") == nil && ListenExportReader.date("31 Jan 2021, 12:34") != nil)
    }

    /// Signed numbers in tags: "-1" was track −1 and "-999" year −999.
    @Test func tagNumbersAreDigitsOnly() throws {
        let tags = AudioFileTags(
            properties: ["TRACKNUMBER": "-1/+12", "DISCNUMBER": "2/3", "DATE": "-999"], durationMilliseconds: 1_000, bitrate: 0, sampleRate: 44_100,
            channels: 2, codec: "flac", picture: nil, pictureMimeType: nil)
        let track = tags.track(path: "/x.flac")
        #expect(track.trackNumber == nil && track.trackCount == nil && track.year == nil)
        #expect(track.discNumber == 2 && track.discCount == 3)
    }

    /// Exports: listen times of ∞ and of the year 2 were taken; two identical iTunes entries
    /// trapped; a CRLF beets config swallowed the rest of the file into the music folder.
    @Test func exportsAreReadWithinReason() throws {
        #expect(ListenExportReader.listenBrainz(["listened_at": 1e300, "track_metadata": ["artist_name": "A", "track_name": "T"]]) == nil)
        #expect(ListenExportReader.listenBrainz(["listened_at": 1_600_000_000, "track_metadata": ["artist_name": "A", "track_name": "T"]]) != nil)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-fuzz-findings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        let csv = dir.appendingPathComponent("lastfm.csv")
        try Data("artist,album,title,date\nA,B,T,inf\n".utf8).write(to: csv)
        #expect(throws: (any Error).self) { try ListenExportReader.lastfm(csv) }
        try Data("artist,album,title,date\nA,B,T,0002-01-01T00:00:00Z\n".utf8).write(to: csv)
        #expect(throws: (any Error).self) { try ListenExportReader.lastfm(csv) }

        let entry = """
            <dict><key>Track ID</key><integer>7</integer><key>Name</key><string>T</string><key>Artist</key><string>A</string>\
            <key>Date Added</key><date>2020-01-01T00:00:00Z</date></dict>
            """
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>Tracks</key><dict>\
            <key>7</key>\(entry)<key>8</key>\(entry.replacingOccurrences(of: "<integer>7</integer>", with: "<integer>8</integer>"))\
            </dict></dict></plist>
            """
        let library = dir.appendingPathComponent("Library.xml")
        try Data(plist.utf8).write(to: library)
        let read = try ITunesReader.read(library)
        #expect(read.users.first?.tracks.count == 2)

        try Data("library: x.db\r\ndirectory: ~/Music\r\nimport:\r\n  move: yes\r\n".utf8).write(to: dir.appendingPathComponent("config.yaml"))
        let folder = BeetsReader.directory(besides: dir.appendingPathComponent("library.db"))
        #expect(folder?.hasSuffix("/Music") == true && folder?.contains("\n") == false, "\(folder ?? "nil")")
        // An empty config (Foundation's read leaked its buffer for it) and one that is no UTF-8: no folder.
        for bytes in [Data(), Data([0x64, 0x69, 0xFF, 0x0A])] {
            try bytes.write(to: dir.appendingPathComponent("config.yaml"))
            #expect(BeetsReader.directory(besides: dir.appendingPathComponent("library.db")) == nil)
        }
    }
}

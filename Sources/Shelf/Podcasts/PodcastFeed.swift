import Foundation
import ShelfCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Why a feed could not be read; the message names the line where the XML parser stopped.
public struct PodcastFeedError: ClassifiedError, Equatable {
    /// A feed that is not RSS or Atom Shelf can read.
    public var kind: ErrorKind { .invalid }
    /// "invalidFeed".
    public var errorCode: String { "invalidFeed" }
    public let message: String
    /// An error with its reason.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A podcast feed as read: RSS 2.0 (with the iTunes namespace) or Atom, reduced to what a
/// library keeps. Parsed by Foundation's XMLParser (libxml2), which resolves no external entities.
public struct PodcastFeed: Sendable, Equatable {
    /// One `item` (RSS) or `entry` (Atom).
    public struct Item: Sendable, Equatable {
        public var guid: String
        public var title: String
        public var description: String
        public var published: Date?
        /// The enclosure's address; nil when the item has none (then the episode is `skipped`).
        public var url: String?
        public var mimeType: String?
        public var length: Int64?
        /// Seconds, from `itunes:duration` (seconds, MM:SS or HH:MM:SS).
        public var duration: Double?
    }

    public var title: String
    public var description: String
    public var imageURL: String?
    public var items: [Item]

    /// The most items kept from one feed (the newest, in the feed's order); a feed with more is read
    /// up to here, so a hostile or runaway feed cannot fill the library.
    public static let itemLimit = 5_000
    /// The longest description kept, in bytes of UTF-8.
    public static let descriptionLimit = 16 * 1024

    private static let itunes = "http://www.itunes.com/dtds/podcast-1.0.dtd"
    private static let atom = "http://www.w3.org/2005/Atom"
    private static let content = "http://purl.org/rss/1.0/modules/content/"

    /// Parses a feed document; throws `PodcastFeedError` for malformed XML or a document that is
    /// neither an RSS channel nor an Atom feed.
    public static func parse(_ data: Data) throws(PodcastFeedError) -> PodcastFeed {
        let reader = Reader()
        let parser = XMLParser(data: try utf8Document(data))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let ok = parser.parse()
        // parse() can answer true after libxml2 reported an error (swift-corelibs-foundation), so
        // the delegate's record of the first error decides.
        if let failure = reader.failure
            ?? (ok || reader.stoppedAtLimit ? nil : (parser.lineNumber, parser.columnNumber, (parser.parserError as? NSError)?.code ?? 0)),
            !reader.stoppedAtLimit
        {
            throw PodcastFeedError("the feed is not well-formed XML (line \(failure.line), column \(failure.column): \(xmlErrorName(failure.code)))")
        }
        guard reader.root != nil else { throw PodcastFeedError("the feed is empty: no XML element in its \(data.count) bytes") }
        guard let kind = reader.kind else {
            throw PodcastFeedError("the document is XML but neither an RSS 2.0 channel nor an Atom feed (its root is <\(reader.root ?? "nothing")>)")
        }
        var feed = reader.feed
        feed.title = clean(feed.title, limit: 1_024)
        feed.description = clean(feed.description, limit: descriptionLimit)
        if feed.title.isEmpty { feed.title = kind == .atom ? "Untitled Atom feed" : "Untitled podcast" }
        feed.items = feed.items.map { item in
            var item = item
            item.title = clean(item.title, limit: 1_024)
            item.description = clean(item.description, limit: descriptionLimit)
            if item.guid.isEmpty { item.guid = item.url ?? item.title }
            return item
        }.filter { !$0.guid.isEmpty }
        return feed
    }

    /// Text without markup, entities decoded by the parser, runs of white space made one, bounded.
    static func clean(_ text: String, limit: Int) -> String {
        var out = ""
        var inTag = false
        for character in text {
            if character == "<" {
                inTag = true
                continue
            }
            if inTag {
                if character == ">" {
                    inTag = false
                    out.append(" ")
                }
                continue
            }
            out.append(character)
        }
        // HTML inside CDATA keeps its entities: the common ones are read, numeric ones too.
        if out.contains("&") { out = decodeEntities(out) }
        let words = out.split(whereSeparator: { $0.isWhitespace })
        var joined = words.joined(separator: " ")
        if joined.utf8.count > limit {
            var cut = joined.utf8.prefix(limit)
            while String(cut) == nil { cut = cut.dropLast() }
            joined = String(cut) ?? ""
        }
        return joined
    }

    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#39;`, `&nbsp;` and numeric references; others stay as written.
    static func decodeEntities(_ text: String) -> String {
        let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " "]
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(10).firstIndex(of: ";") {
                let name = after[..<semicolon]
                var replacement: String?
                if let value = named[String(name)] {
                    replacement = value
                } else if name.hasPrefix("#x") || name.hasPrefix("#X"), let code = UInt32(name.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code) {
                    replacement = String(Character(scalar))
                } else if name.hasPrefix("#"), let code = UInt32(name.dropFirst()), let scalar = Unicode.Scalar(code) {
                    replacement = String(Character(scalar))
                }
                if let replacement {
                    out += replacement
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            out += "&"
            rest = after
        }
        return out + rest
    }

    /// `itunes:duration`: seconds, MM:SS or HH:MM:SS (fractions allowed); nil for anything else.
    static func duration(_ text: String) -> Double? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for part in parts {
            guard let value = Double(part), value >= 0, value.isFinite else { return nil }
            total = total * 60 + value
        }
        return total > 0 && total < 1_000_000 ? total : nil
    }

    /// RFC 822 dates as feeds write them (with or without the weekday and seconds, numeric or named
    /// zones), and ISO 8601 (Atom).
    static func date(_ text: String) -> Date? { DateReader().date(text) }

    /// The dates of a feed's items: RFC 822 (RSS), ISO 8601 (Atom), read by Shelf itself
    /// (`InternetDate`): Foundation's DateFormatter trapped on a date whose text ran into a
    /// combining mark, so one hostile feed stopped the server (shelf-fuzz, podcast target).
    struct DateReader {
        func date(_ text: String) -> Date? { InternetDate.parse(text) }
    }

    /// The document as valid UTF-8 that says so. Foundation's XMLParser traps on a name or namespace
    /// URI that is not UTF-8, and libxml2 handed such bytes on from a document it read as UTF-8 (a
    /// garbled or unknown encoding name included; shelf-fuzz, podcast target): one hostile feed
    /// stopped the server. So Shelf decodes the encodings feeds use itself, and refuses a document
    /// read as UTF-8 that is not, naming the byte; libxml2 then never transcodes.
    static func utf8Document(_ data: Data) throws(PodcastFeedError) -> Data {
        let head = [UInt8](data.prefix(256))
        var encoding = String.Encoding.utf8
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) {
            encoding = .utf16
        } else if let name = declaredEncoding(head) {
            let known: [String: String.Encoding] = [
                "iso88591": .isoLatin1, "latin1": .isoLatin1, "l1": .isoLatin1, "usascii": .ascii, "ascii": .ascii,
                "windows1252": .windowsCP1252, "cp1252": .windowsCP1252, "iso88592": .isoLatin2, "windows1250": .windowsCP1250,
                "windows1251": .windowsCP1251, "shiftjis": .shiftJIS, "sjis": .shiftJIS, "eucjp": .japaneseEUC,
                "utf16": .utf16, "utf16le": .utf16LittleEndian, "utf16be": .utf16BigEndian,
            ]
            encoding = known[String(name.lowercased().filter { $0.isLetter || $0.isNumber })] ?? .utf8
        }
        if encoding == .utf8 {
            if let offset = firstInvalidUTF8(data) {
                throw PodcastFeedError("the feed is not valid UTF-8 (byte \(offset)), the encoding it declares or XML assumes without one")
            }
            // Valid, so decoding replaces nothing.
            return withoutEmptyInstructions(String(decoding: data, as: UTF8.self))
        }
        guard var text = String(data: data, encoding: encoding) else {
            throw PodcastFeedError("the feed is not valid \(encoding.description), the encoding it declares")
        }
        // The declaration now names UTF-8, which the bytes are.
        if text.hasPrefix("<?xml"), let end = text.range(of: "?>") {
            text.replaceSubrange(text.startIndex..<end.upperBound, with: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        }
        return withoutEmptyInstructions(text)
    }

    /// `text` as UTF-8, without processing instructions that carry nothing (`<?name?>`): XMLParser
    /// reads the missing text as a C string and crashes (shelf-fuzz, podcast target). They mean
    /// nothing to a feed.
    static func withoutEmptyInstructions(_ text: String) -> Data {
        guard text.contains("?>"), let pattern = try? NSRegularExpression(pattern: "<\\?[^\\s?>]+\\s*\\?>") else {
            return Data(text.utf8)
        }
        let stripped = pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "")
        return Data(stripped.utf8)
    }

    /// The encoding an XML declaration at the start of `head` names, as written, or nil.
    static func declaredEncoding(_ head: [UInt8]) -> String? {
        let text = String(decoding: head.starts(with: [0xEF, 0xBB, 0xBF]) ? head.dropFirst(3) : head[...], as: UTF8.self)
        guard text.hasPrefix("<?xml"), let end = text.range(of: "?>"), let name = text[..<end.lowerBound].range(of: "encoding") else { return nil }
        // encoding = "NAME" or 'NAME', spaces allowed around the equals sign.
        let rest = text[name.upperBound..<end.lowerBound].drop { $0 == " " || $0 == "\t" }
        guard rest.first == "=" else { return nil }
        let value = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
        guard let quote = value.first, quote == "\"" || quote == "'" else { return nil }
        return String(value.dropFirst().prefix { $0 != quote })
    }

    /// The offset of the first byte that does not belong to a well-formed UTF-8 sequence, or nil.
    static func firstInvalidUTF8(_ data: Data) -> Int? {
        var bytes = data.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&bytes) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// libxml2's error codes (as XMLParser passes them on) in words, for the common ones.
    static func xmlErrorName(_ code: Int) -> String {
        switch code {
        case 4: "the document is empty"
        case 5: "the document ends before its elements close"
        case 9: "a character that XML does not allow"
        case 26: "an undeclared entity"
        case 38, 39, 40, 41: "a malformed attribute"
        case 64, 65, 66: "a malformed XML declaration"
        case 73: "an unclosed tag"
        case 76: "a closing tag that does not match its opening tag"
        case 85, 86, 87: "content after the document's root element"
        case 89: "a document larger than the parser accepts"
        default: "XML error \(code)"
        }
    }

    private enum Kind { case rss, atom }

    /// The parser's delegate: collects the channel's and items' fields as the elements close.
    private final class Reader: NSObject, XMLParserDelegate {
        var feed = PodcastFeed(title: "", description: "", imageURL: nil, items: [])
        var kind: Kind?
        var root: String?
        var stoppedAtLimit = false
        /// Where libxml2 first reported an error, and its code.
        var failure: (line: Int, column: Int, code: Int)?
        private var path: [String] = []
        private var text = ""
        private var item: Item?
        private var itemDescriptionRank = 0
        private var channelDescriptionRank = 0
        private let dates = DateReader()

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if root == nil {
                root = qualifiedName ?? name
                if name == "rss" { kind = .rss } else if name == "feed", namespaceURI == PodcastFeed.atom { kind = .atom }
            }
            path.append(name)
            text = ""
            let inItem = item != nil
            switch (name, namespaceURI ?? "") {
            case ("item", ""), ("entry", PodcastFeed.atom):
                if feed.items.count >= PodcastFeed.itemLimit {
                    stoppedAtLimit = true
                    parser.abortParsing()
                    return
                }
                item = Item(guid: "", title: "", description: "", published: nil, url: nil, mimeType: nil, length: nil, duration: nil)
                itemDescriptionRank = 0
            case ("enclosure", ""):
                if inItem, let url = attributes["url"], item?.url == nil {
                    item?.url = url
                    item?.mimeType = attributes["type"]
                    item?.length = attributes["length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 > 0 ? $0 : nil }
                }
            case ("link", PodcastFeed.atom):
                if inItem, attributes["rel"] == "enclosure", let href = attributes["href"], item?.url == nil {
                    item?.url = href
                    item?.mimeType = attributes["type"]
                    item?.length = attributes["length"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
                }
            case ("image", PodcastFeed.itunes):
                if !inItem, let href = attributes["href"], !href.isEmpty { feed.imageURL = href }
            default: break
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if failure == nil, !stoppedAtLimit { failure = (parser.lineNumber, parser.columnNumber, (parseError as NSError).code) }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, foundCDATA block: Data) { text += String(decoding: block, as: UTF8.self) }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            defer {
                path.removeLast()
                text = ""
            }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            let ns = namespaceURI ?? ""
            if var current = item {
                switch (name, ns) {
                case ("item", ""), ("entry", PodcastFeed.atom):
                    feed.items.append(current)
                    item = nil
                    return
                case ("title", ""), ("title", PodcastFeed.atom): current.title = value
                case ("guid", ""), ("id", PodcastFeed.atom): current.guid = value
                case ("pubDate", ""), ("published", PodcastFeed.atom): current.published = dates.date(value) ?? current.published
                case ("updated", PodcastFeed.atom): if current.published == nil { current.published = dates.date(value) }
                case ("duration", PodcastFeed.itunes): current.duration = PodcastFeed.duration(value)
                // The fullest description wins: content:encoded, then description/summary, then iTunes' summary/subtitle.
                case ("encoded", PodcastFeed.content), ("content", PodcastFeed.atom): rank(&current, value, 3)
                case ("description", ""), ("summary", PodcastFeed.atom): rank(&current, value, 2)
                case ("summary", PodcastFeed.itunes), ("subtitle", PodcastFeed.itunes): rank(&current, value, 1)
                default: break
                }
                item = current
                return
            }
            let parent = path.count >= 2 ? path[path.count - 2] : ""
            switch (name, ns) {
            case ("title", ""): if parent == "channel" { feed.title = value }
            case ("title", PodcastFeed.atom): if parent == "feed" { feed.title = value }
            case ("url", ""): if parent == "image", feed.imageURL == nil, !value.isEmpty { feed.imageURL = value }
            case ("logo", PodcastFeed.atom), ("icon", PodcastFeed.atom): if feed.imageURL == nil, !value.isEmpty { feed.imageURL = value }
            case ("description", ""), ("subtitle", PodcastFeed.atom):
                if parent == "channel" || parent == "feed", channelDescriptionRank < 2 {
                    feed.description = value
                    channelDescriptionRank = 2
                }
            case ("summary", PodcastFeed.itunes):
                if channelDescriptionRank < 1, !value.isEmpty {
                    feed.description = value
                    channelDescriptionRank = 1
                }
            default: break
            }
        }

        private func rank(_ item: inout Item, _ value: String, _ rank: Int) {
            guard !value.isEmpty, rank > itemDescriptionRank else { return }
            item.description = value
            itemDescriptionRank = rank
        }
    }
}

import Foundation

/// One comparable component of a track's position in a sorted list: the bytes of a text key
/// (compared as SQLite compares BLOBs, with memcmp) or a number. Both query paths build their
/// order from these same values, so they agree by construction.
public enum SortComponent: Comparable, Sendable, Hashable {
    case bytes([UInt8])
    case number(Double)

    public static func < (lhs: SortComponent, rhs: SortComponent) -> Bool {
        switch (lhs, rhs) {
        case (.bytes(let a), .bytes(let b)): a.lexicographicallyPrecedes(b)
        case (.number(let a), .number(let b)): a < b
        case (.bytes, .number): false
        case (.number, .bytes): true
        }
    }
}

/// Settings of the text collation.
public struct SortKeyOptions: Sendable, Hashable, Codable {
    /// Leading words skipped when they start a value followed by more text, lowercase, with the
    /// separator that follows them ("the ", "l'").
    public var articles: [String]
    /// Folded values never stripped of an article (a band called "The The" keeps its name).
    public var exceptions: Set<String>

    /// English articles ("the", "a", "an") by default.
    public init(articles: [String] = SortKeyOptions.english, exceptions: Set<String> = []) {
        self.articles = articles
        self.exceptions = exceptions
    }

    public static let english = ["the ", "a ", "an "]
    public static let french = ["le ", "la ", "les ", "l'", "un ", "une "]
    public static let german = ["der ", "die ", "das ", "ein ", "eine "]
    public static let spanish = ["el ", "la ", "los ", "las ", "un ", "una "]
    public static let italian = ["il ", "lo ", "la ", "i ", "gli ", "le ", "l'"]
    /// No article is skipped.
    public static let none = SortKeyOptions(articles: [])
}

/// The collation: turns display values (and sort tags) into byte keys and sections.
///
/// A text key is one section byte followed by the body, so every section is one contiguous range
/// of keys in both directions and a jump to a section is one index probe:
/// - `A`–`Z` (0x41–0x5A) for a first letter a–z after folding;
/// - kana rows あかさたなはまやらわ (0x61–0x6A) for a first kana, katakana folded to hiragana;
/// - `#` (0x7E) for everything else: digits, symbols, other scripts;
/// - a missing value (nil, empty, or only whitespace) is the single byte 0xFF: after every value,
///   in the `#` section, which it keeps contiguous because nothing sorts between them.
/// The body folds case, diacritics, width (Ａ = A) and kana (カ = か, が = か), skips a leading
/// article when `options` say so, turns each run of whitespace into one 0x02 byte, and writes each
/// run of ASCII digits as 0x01, its length, then the digits without leading zeros, so "Track 2"
/// sorts before "Track 10". Other characters keep their UTF-8 bytes (code point order).
///
/// Folding is right for sorting and search and wrong for identity: ひかる and ヒカル, or "Björk"
/// and "Bjork", are different names. When the body lost something a name is told by (more than
/// case, width, normalisation and spaces), the key goes on with 0x00 and the name's identity text
/// (`identityScalars`), so such names are different keys and groups, sorted next to each other.
public enum SortKey {
    /// The key of a missing value.
    public static let missingKey: [UInt8] = [0xFF]
    /// The number standing for a missing numeric value: above every real one.
    public static let missingNumber = 9.0e18

    /// The section names in ascending key order.
    public static let sectionNames: [String] =
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).map { String(UnicodeScalar($0)) } + kanaRows.map(\.name) + ["#"]

    private static let kanaRows: [(name: String, last: UInt32)] = [
        ("あ", 0x304A), ("か", 0x3054), ("さ", 0x305E), ("た", 0x3069), ("な", 0x306E),
        ("は", 0x307D), ("ま", 0x3082), ("や", 0x3088), ("ら", 0x308D), ("わ", 0x3093),
    ]

    /// True when a value is nil, empty, or only Unicode whitespace (including U+3000 and NBSP).
    public static func isBlank(_ value: String?) -> Bool {
        guard let value else { return true }
        return value.unicodeScalars.allSatisfy(isSpace)
    }

    /// The key of a text value; a blank value gives `missingKey`.
    public static func textKey(_ value: String?, options: SortKeyOptions = SortKeyOptions()) -> [UInt8] {
        guard let value, !isBlank(value) else { return missingKey }
        // Names repeat across a library (every track of an album), so recent keys are remembered.
        if options == defaultOptions {
            if let cached = KeyCache<[UInt8]>.keys.get(value) { return cached }
            let key = computeKey(value, options: options)
            KeyCache<[UInt8]>.keys.set(value, key)
            return key
        }
        return computeKey(value, options: options)
    }

    private static let defaultOptions = SortKeyOptions()

    private static func computeKey(_ value: String, options: SortKeyOptions) -> [UInt8] {
        // The body is built from the folded form, so two values that fold alike always share it:
        // the mirror relies on it to answer an equality filter from a sort index (`bodyRange`).
        // The identity tail keeps apart what folding merged but is not the same name.
        var lossy = false
        if let bytes = asciiFolded(value) {
            var key = buildKey(bytes, options: options, lossy: &lossy)
            if lossy && key != missingKey {
                key.append(identitySeparator)
                key += bytes
            }
            return key
        }
        let folded = foldedScalars(value)
        var key = buildKey(folded, options: options, lossy: &lossy)
        guard key != missingKey else { return key }
        let identity = identityScalars(value)
        if lossy || identity != folded {
            key.append(identitySeparator)
            for scalar in identity { UTF8.encode(scalar) { key.append($0) } }
        }
        return key
    }

    /// The byte between a key's body and its identity tail; no body holds it.
    public static let identitySeparator: UInt8 = 0x00

    /// A key without its identity tail: the part sorting and search folding compare, which is
    /// what every key was before names were told apart by identity (schema 15).
    public static func body(ofKey key: [UInt8]) -> [UInt8] {
        guard let end = key.firstIndex(of: identitySeparator) else { return key }
        return Array(key[..<end])
    }

    /// What an album key's release tail starts with: 0x00 keeps the key beside its name's others
    /// (it sorts below every body byte), and 0xFF, which UTF-8 never holds, says a release follows.
    public static let releaseMark: [UInt8] = [0x00, 0xFF]

    /// An album's key with its MusicBrainz release ID: two releases of one name (two editions,
    /// two artists' "Greatest Hits") are two albums, sorted next to each other. A value that is
    /// not a UUID is no release ID, and the unknown album (`missingKey`) stays itself.
    public static func withRelease(_ key: [UInt8], _ releaseID: String?) -> [UInt8] { appending(release(releaseID), to: key) }

    /// `key` with the tail of an ID already read as `release(_:)` reads it (nil: `key` as it is).
    private static func appending(_ id: String?, to key: [UInt8]) -> [UInt8] {
        guard key != missingKey, let id else { return key }
        return key + releaseMark + Array(id.utf8)
    }

    /// An artist's key with its MusicBrainz artist ID, as `withRelease` does for albums: two
    /// artists of one name ("John Williams" the composer and the guitarist) are two artists,
    /// sorted next to each other. Without an ID (or with one that is no UUID) the name decides.
    /// MusicBrainz's "Various Artists" gives no identity: Picard tags compilations with it, and
    /// they file under the one "Various Artists" whether flagged as compilations or not.
    public static func withArtistID(_ key: [UInt8], _ artistID: String?) -> [UInt8] {
        let id = release(artistID)
        return appending(id == variousArtistsID ? nil : id, to: key)
    }

    /// MusicBrainz's ID of "Various Artists", the special artist compilations are credited to.
    public static let variousArtistsID = "89ad4ac3-39f7-470e-963a-56509c546377"

    /// The MusicBrainz ID a key ends with (an album's release, an artist's ID), or nil.
    public static func musicBrainzID(ofKey key: [UInt8]) -> String? {
        let bare = withoutRelease(key)
        guard bare.count < key.count else { return nil }
        return String(decoding: key[(bare.count + releaseMark.count)...], as: UTF8.self)
    }

    /// A track's display-artist key: its artist's key and, when it credits one artist with one
    /// MusicBrainz ID, that ID, as every view groups it.
    public static func artistKey(of track: Track, options: SortKeyOptions = SortKeyOptions()) -> [UInt8] {
        withArtistID(textKey(track.artist, options: options), track.details.displayArtistID)
    }

    /// A track's album-artist key, with the album artist's MusicBrainz ID as `artistKey(of:)`.
    public static func albumArtistKey(of track: Track, options: SortKeyOptions = SortKeyOptions()) -> [UInt8] {
        withArtistID(textKey(track.albumArtist, options: options), track.details.displayAlbumArtistID)
    }

    /// The keys of a credit list (`artists`, `albumArtists`) in order, each name with its
    /// MusicBrainz ID when the IDs line up with the names one for one (as Picard writes them).
    public static func creditKeys(_ names: [String], ids: [String], options: SortKeyOptions = SortKeyOptions()) -> [[UInt8]] {
        let aligned = ids.count == names.count
        return names.indices.map { index in
            let key = textKey(names[index], options: options)
            return aligned ? withArtistID(key, ids[index]) : key
        }
    }

    /// A role credit's key (performer, producer, …; `Contributor`): its name's, with the
    /// MusicBrainz ID of the track's artist or album artist of that name when the track gives
    /// one, so the credit leads to the artist that name is on this track.
    public static func contributorKey(_ name: String, of track: Track, options: SortKeyOptions = SortKeyOptions()) -> [UInt8] {
        let key = textKey(name, options: options)
        let ids = track.details.musicBrainz
        guard !ids.artistIDs.isEmpty || !ids.albumArtistIDs.isEmpty else { return key }
        let known =
            creditKeys(track.details.artists, ids: ids.artistIDs, options: options)
            + creditKeys(track.details.albumArtists, ids: ids.albumArtistIDs, options: options)
            + [artistKey(of: track, options: options), albumArtistKey(of: track, options: options)]
        return known.first { $0.count > key.count && withoutRelease($0) == key } ?? key
    }

    /// A track's album key: its album name's key and its release ID, as every view groups it.
    public static func albumKey(of track: Track, options: SortKeyOptions = SortKeyOptions()) -> [UInt8] {
        withRelease(textKey(track.album, options: options), track.details.musicBrainz.releaseID)
    }

    /// A release ID as album keys hold it (a UUID in lower case), or nil for a value that is none.
    public static func release(_ releaseID: String?) -> String? {
        guard let releaseID, let uuid = UUID(uuidString: releaseID.trimmingCharacters(in: .whitespaces)) else { return nil }
        return uuid.uuidString.lowercased()
    }

    /// An album key without its release tail: the album's key as every key was before releases
    /// told albums apart (schema 17).
    public static func withoutRelease(_ key: [UInt8]) -> [UInt8] {
        var index = key.startIndex
        while let mark = key[index...].firstIndex(of: 0x00) {
            if mark + 1 < key.endIndex, key[mark + 1] == 0xFF { return Array(key[..<mark]) }
            index = mark + 1
        }
        return key
    }

    /// The keys of every value that folds as `text` does (all names that sort and search as it,
    /// whatever their identity): from its body, inclusive, to the body and 0x01, exclusive.
    public static func bodyRange(_ text: String?) -> (lower: [UInt8], upper: [UInt8]) {
        let body = body(ofKey: textKey(text))
        return (body, body + [0x01])
    }

    /// What tells two names apart: the text with only what taggers vary without meaning to
    /// folded away (compatibility normalisation, which folds width; case; surrounding spaces;
    /// each whitespace run as one space). Kana, voicing marks, accents, articles and leading
    /// zeros, which sorting folds, stay.
    static func identityScalars(_ value: String) -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        var pendingSpace = false
        for scalar in value.precomposedStringWithCompatibilityMapping.lowercased().unicodeScalars where scalar.value != 0 {
            if isSpace(scalar) {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(scalar)
            }
        }
        return result
    }

    /// The key of folded text: all-ASCII bytes (the fast path) or scalars, which give equal keys
    /// for equal text. Without the identity tail (`textKey` adds it).
    static func key<Unit: FoldedUnit>(ofFolded folded: [Unit], options: SortKeyOptions) -> [UInt8] {
        var lossy = false
        return buildKey(folded, options: options, lossy: &lossy)
    }

    /// The key body of folded text; `lossy` is set when an article or leading zeros were left out,
    /// which the folded text alone would not say.
    private static func buildKey<Unit: FoldedUnit>(_ folded: [Unit], options: SortKeyOptions, lossy: inout Bool) -> [UInt8] {
        var scalars = folded[...]
        if skipArticle(&scalars, options: options) { lossy = true }
        guard let first = scalars.first else { return missingKey }
        var key: [UInt8] = [sectionByte(first.code)]
        key.reserveCapacity(scalars.count + 4)
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let value = scalars[index].code
            if value >= 0x30 && value <= 0x39 {
                var end = index
                while end < scalars.endIndex, scalars[end].code >= 0x30 && scalars[end].code <= 0x39 { end += 1 }
                var start = index
                while start < end - 1, scalars[start].code == 0x30 { start += 1 }  // leading zeros
                let count = min(end - start, 250)
                if start != index || count != end - start { lossy = true }
                key.append(0x01)
                key.append(UInt8(count))
                for digit in scalars[start..<(start + count)] { key.append(UInt8(digit.code)) }
                index = end
            } else if scalars[index].isSpace {
                key.append(0x02)
                while index < scalars.endIndex, scalars[index].isSpace { index += 1 }
            } else {
                // U+0000 is left out: its byte is the identity separator.
                if value == 0 {
                    lossy = true
                } else if value < 0x80 {
                    key.append(UInt8(value))
                } else {
                    UTF8.encode(Unicode.Scalar(value)!) { key.append($0) }
                }
                index += 1
            }
        }
        return key
    }

    /// Unicode whitespace, with the ASCII cases answered without a property lookup.
    @inline(__always)
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x80 { return value == 0x20 || (value >= 0x09 && value <= 0x0D) }
        return scalar.properties.isWhitespace
    }

    /// The key of a text field: the sort tag when sort tags are on and the tag is not blank, else
    /// the display value.
    public static func textKey(_ value: String?, sortTag: String?, useSortTags: Bool, options: SortKeyOptions = SortKeyOptions()) -> [UInt8] {
        if useSortTags, !isBlank(sortTag) { return textKey(sortTag, options: options) }
        return textKey(value, options: options)
    }

    /// The section a key files under: read from the key, never from the display value.
    public static func section(ofKey key: [UInt8]) -> String { section(ofByte: key.first ?? 0xFF) }

    /// The section named by a key's first byte.
    public static func section(ofByte byte: UInt8) -> String { sectionNames[sectionOrdinal(ofByte: byte)] }

    /// The position in `sectionNames` of the section a key byte names.
    public static func sectionOrdinal(ofByte byte: UInt8) -> Int { Int(sectionOrdinalOfByte[Int(byte)]) }

    /// Every byte's section ordinal, built once: list pages name a section on every row.
    private static let sectionOrdinalOfByte: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
        switch byte {
        case 0x41...0x5A: UInt8(byte - 0x41)
        case 0x61...0x6A: UInt8(26 + byte - 0x61)
        default: 36
        }
    }

    /// The first key byte of a section name and the last, both inclusive; nil for an unknown name.
    public static func byteRange(ofSection name: String) -> ClosedRange<UInt8>? {
        if name == "#" { return 0x7E...0xFF }
        if let index = kanaRows.firstIndex(where: { $0.name == name }) { return UInt8(0x61 + index)...UInt8(0x61 + index) }
        let upper = name.uppercased()
        if upper.count == 1, let ascii = upper.unicodeScalars.first, (0x41...0x5A).contains(ascii.value) {
            return UInt8(ascii.value)...UInt8(ascii.value)
        }
        return nil
    }

    private static func sectionByte(_ value: UInt32) -> UInt8 {
        if (0x61...0x7A).contains(value) { return UInt8(value - 0x20) }
        if (0x3041...0x3096).contains(value) {
            if value >= 0x3094 { return value == 0x3094 ? 0x61 : 0x62 }  // ゔ files under あ, ゕゖ under か
            return UInt8(0x61 + kanaRows.firstIndex { value <= $0.last }!)
        }
        return 0x7E
    }

    /// `foldedScalars` of an all-ASCII value as bytes (trimmed, lowercased, each whitespace run one
    /// space), or nil when the value has a non-ASCII byte. Most of any library is ASCII, and this
    /// path builds no scalars and looks up no properties.
    static func asciiFolded(_ value: String) -> [UInt8]? {
        var value = value
        return value.withUTF8 { bytes -> [UInt8]? in
            var start = 0
            var end = bytes.count
            while start < end, isASCIISpace(bytes[start]) { start += 1 }
            while end > start, isASCIISpace(bytes[end - 1]) { end -= 1 }
            var result: [UInt8] = []
            result.reserveCapacity(end - start)
            var lastWasSpace = false
            for index in start..<end {
                let byte = bytes[index]
                if byte >= 0x80 { return nil }
                if isASCIISpace(byte) {
                    if !lastWasSpace { result.append(0x20) }
                    lastWasSpace = true
                } else {
                    result.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
                    lastWasSpace = false
                }
            }
            return result
        }
    }

    @inline(__always)
    static func isASCIISpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// Case, diacritic, width and kana folding. ASCII, most of any library, takes a fast path;
    /// other characters are folded one scalar at a time through a cache, because Foundation's
    /// folding costs microseconds a call and a library repeats the same few thousand characters.
    /// `normalize`, with every whitespace run as one U+0020: the folded form filters match on.
    static func foldedScalars(_ value: String) -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        var lastWasSpace = false
        for scalar in normalize(value) {
            if isSpace(scalar) {
                if !lastWasSpace { result.append(" ") }
                lastWasSpace = true
            } else {
                result.append(scalar)
                lastWasSpace = false
            }
        }
        return result
    }

    static func normalize(_ value: String) -> [Unicode.Scalar] {
        let scalars = value.unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, isSpace(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isSpace(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(scalars.distance(from: start, to: end))
        for scalar in scalars[start..<end] {
            if scalar.isASCII {
                let v = scalar.value
                result.append(v >= 0x41 && v <= 0x5A ? Unicode.Scalar(v + 0x20)! : scalar)
            } else {
                result.append(contentsOf: FoldCache.shared.fold(scalar))
            }
        }
        return result
    }

    /// What one non-ASCII scalar folds to: Foundation's case, diacritic and width folding, then
    /// canonical decomposition without voicing marks and accents, katakana as hiragana.
    static func foldScalar(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        let folded = String(scalar).folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var result: [Unicode.Scalar] = []
        for part in folded.decomposedStringWithCanonicalMapping.unicodeScalars {
            switch part.value {
            case 0x3099, 0x309A, 0xFF9E, 0xFF9F, 0x0300...0x036F: continue  // voicing marks and accents
            case 0x30A1...0x30F6, 0x30FD, 0x30FE: result.append(Unicode.Scalar(part.value - 0x60)!)  // katakana → hiragana
            default: result.append(part)
            }
        }
        return result
    }

    /// Leaves out a leading article; true when one was left out.
    private static func skipArticle<Unit: FoldedUnit>(_ scalars: inout ArraySlice<Unit>, options: SortKeyOptions) -> Bool {
        guard !options.articles.isEmpty, scalars.count > 1 else { return false }
        for article in options.articles {
            let prefix = article.unicodeScalars
            guard scalars.count > prefix.count, scalars.lazy.map(\.code).starts(with: prefix.lazy.map(\.value)) else { continue }
            if !options.exceptions.isEmpty,
                options.exceptions.contains(String(String.UnicodeScalarView(scalars.map { Unicode.Scalar($0.code)! })))
            {
                return false
            }
            let rest = scalars.dropFirst(prefix.count).drop { $0.isSpace }
            guard !rest.isEmpty else { return false }
            scalars = rest
            return true
        }
        return false
    }

    /// The component of one field of a track (numbers and dates as themselves, missing values as
    /// `missingNumber`; `path` as its raw UTF-8 bytes).
    public static func component(_ field: SortField, of track: Track, useSortTags: Bool, options: SortKeyOptions = SortKeyOptions()) -> SortComponent {
        func number<T: BinaryInteger>(_ value: T?) -> SortComponent { .number(value.map { Double($0) } ?? missingNumber) }
        func date(_ value: Date?) -> SortComponent { .number(value.map(NumberField.seconds) ?? missingNumber) }
        switch field {
        case .title: return .bytes(textKey(track.title, sortTag: track.sortTitle, useSortTags: useSortTags, options: options))
        case .artist:
            let key = textKey(track.artist, sortTag: track.sortArtist, useSortTags: useSortTags, options: options)
            return .bytes(withArtistID(key, track.details.displayArtistID))
        case .album:
            let key = textKey(track.album, sortTag: track.sortAlbum, useSortTags: useSortTags, options: options)
            return .bytes(withRelease(key, track.details.musicBrainz.releaseID))
        case .albumArtist:
            let key = textKey(track.albumArtist, sortTag: track.sortAlbumArtist, useSortTags: useSortTags, options: options)
            return .bytes(withArtistID(key, track.details.displayAlbumArtistID))
        case .composer:
            return .bytes(textKey(track.composer, sortTag: track.sortComposer, useSortTags: useSortTags, options: options))
        case .genre: return .bytes(textKey(track.genre, options: options))
        case .path: return .bytes(Array(track.path.utf8))
        case .year: return number(track.year)
        case .trackNumber: return number(track.trackNumber)
        case .discNumber: return number(track.discNumber)
        case .duration: return .number(track.duration ?? missingNumber)
        case .bitrate: return number(track.bitrate)
        case .sampleRate: return number(track.sampleRate)
        case .fileSize: return number(track.fileSize)
        case .dateAdded: return date(track.dateAdded)
        case .dateModified: return date(track.dateModified)
        case .lastPlayed: return date(track.lastPlayed)
        case .playCount: return number(track.playCount)
        case .rating: return number(track.rating)
        }
    }

    /// The whole key of a track under `query`: its tie-break chain's components (the ID comes last
    /// and is compared separately).
    public static func components(of track: Track, for query: LibraryQuery, options: SortKeyOptions = SortKeyOptions()) -> [SortComponent] {
        query.sort.tieBreakChain.map { component($0, of: track, useSortTags: query.useSortTags, options: options) }
    }

    /// True when `a` comes before `b` under the ascending order of the chain, the ID breaking ties.
    public static func precedes(_ a: (key: [SortComponent], id: TrackID), _ b: (key: [SortComponent], id: TrackID)) -> Bool {
        for (x, y) in zip(a.key, b.key) where x != y { return x < y }
        return a.id < b.id
    }

    /// The section of a track in a list sorted by `field`: from the key of the chain's first
    /// component; numeric sorts and `path` have the one section `#`.
    public static func section(of key: [SortComponent], field: SortField) -> String {
        if field != .path, case .bytes(let bytes)? = key.first { return section(ofKey: bytes) }
        return "#"
    }
}

/// One unit of folded text: an ASCII byte (the fast path) or a scalar, so that one key builder
/// serves both.
protocol FoldedUnit {
    var code: UInt32 { get }
    var isSpace: Bool { get }
}

extension UInt8: FoldedUnit {
    var code: UInt32 { UInt32(self) }
    var isSpace: Bool { SortKey.isASCIISpace(self) }
}

extension Unicode.Scalar: FoldedUnit {
    var code: UInt32 { value }
    var isSpace: Bool { SortKey.isSpace(self) }
}

/// The per-scalar folding cache shared by every thread.
final class FoldCache: @unchecked Sendable {
    // `lock` protects `table`; entries are never removed, and there are at most as many as
    // distinct non-ASCII characters seen.
    private let lock = NSLock()
    private var table: [UInt32: [Unicode.Scalar]] = [:]

    static let shared = FoldCache()

    func fold(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        lock.lock()
        if let cached = table[scalar.value] {
            lock.unlock()
            return cached
        }
        lock.unlock()
        let folded = SortKey.foldScalar(scalar)
        lock.lock()
        table[scalar.value] = folded
        lock.unlock()
        return folded
    }
}

/// A small bounded memo of recent results, shared by every thread; emptied when full.
final class KeyCache<Value>: @unchecked Sendable {
    // `lock` protects `table`.
    private let lock = NSLock()
    private var table: [String: Value] = [:]
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    static var keys: KeyCache<[UInt8]> { sortKeys }
    static var folds: KeyCache<String> { foldedTexts }

    func get(_ key: String) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        return table[key]
    }

    func set(_ key: String, _ value: Value) {
        lock.lock()
        defer { lock.unlock() }
        if table.count >= limit { table.removeAll(keepingCapacity: true) }
        table[key] = value
    }
}

private let sortKeys = KeyCache<[UInt8]>(limit: 8_192)
private let foldedTexts = KeyCache<String>(limit: 8_192)

import Foundation

/// How a text file beside the music (a `.cue` sheet, an `.m3u`/`.m3u8` playlist, an `.lrc`/`.txt`
/// lyrics file) was encoded: one detection for all three (`LegacyText`). Kept with a parsed sheet
/// so that a rewritten sheet is written back in the encoding the ripper (and the player that
/// reads it) used.
enum TextEncoding: String, Sendable, Codable {
    /// UTF-8 without a byte-order mark (also every plain-ASCII file).
    case utf8
    /// UTF-8 led by EF BB BF, as foobar2000 and EAC's Unicode option write it; the mark is kept.
    case utf8BOM
    /// UTF-16 led by FF FE (little-endian), as Windows' Notepad writes "Unicode".
    case utf16LE
    /// UTF-16 led by FE FF (big-endian).
    case utf16BE
    /// Japanese rips from Windows tools. Decoded as CP932, the Windows superset of Shift-JIS that
    /// those tools actually write (NEC and IBM extensions included).
    case shiftJIS
    /// The fallback for any other legacy file (EAC's default "ANSI" in Western Europe and the US).
    case windows1252

    /// The encoding `data` is most likely in. Shift-JIS is only chosen when the bytes hold at least
    /// one double-byte character, since a Latin-1 accent alone often also passes as half-width kana.
    static func detect(_ data: Data) -> TextEncoding {
        detect([UInt8](data))
    }

    /// The text of `data` (without the byte-order mark), or nil when it is not in this encoding.
    func decode(_ data: Data) -> String? {
        let bytes = [UInt8](data)
        return decode(bytes[markLength(of: bytes)...])
    }

    /// `text` as bytes in this encoding, or nil when some character has no code in it. Never adds
    /// a byte-order mark: the mark belongs to the file, not to the values written into it.
    func encode(_ text: String) -> Data? {
        encodeBytes(text).map { Data($0) }
    }

    /// The name people know the encoding by, for error messages.
    var displayName: String {
        switch self {
        case .utf8: "UTF-8"
        case .utf8BOM: "UTF-8 (with BOM)"
        case .utf16LE: "UTF-16 (little-endian)"
        case .utf16BE: "UTF-16 (big-endian)"
        case .shiftJIS: "Shift-JIS"
        case .windows1252: "Windows-1252"
        }
    }

    /// The encoding a sheet is parsed and rewritten in: UTF-16 is transcoded to UTF-8 first.
    var parsedAs: TextEncoding { self == .utf16LE || self == .utf16BE ? .utf8 : self }

    /// How many leading bytes of `bytes` are this encoding's byte-order mark.
    func markLength(of bytes: [UInt8]) -> Int {
        switch self {
        case .utf8BOM: bytes.starts(with: Self.byteOrderMark) ? 3 : 0
        case .utf16LE, .utf16BE: 2
        case .utf8, .shiftJIS, .windows1252: 0
        }
    }

    /// UTF-8's byte-order mark, which Windows tools put first and other readers stumble on.
    fileprivate static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// `detect(_:)` on bytes already copied out of `Data`.
    fileprivate static func detect(_ bytes: [UInt8]) -> TextEncoding {
        if bytes.starts(with: byteOrderMark) { return .utf8BOM }
        if bytes.starts(with: [0xFF, 0xFE]) { return .utf16LE }
        if bytes.starts(with: [0xFE, 0xFF]) { return .utf16BE }
        if String(validating: bytes, as: UTF8.self) != nil { return .utf8 }
        // Bytes can be well-formed Shift-JIS yet use codes CP932 leaves unassigned; those are not Shift-JIS.
        if isPlausibleShiftJIS(bytes), String(data: Data(bytes), encoding: .shiftJIS) != nil { return .shiftJIS }
        return .windows1252
    }

    /// Whether `bytes` follow Shift-JIS's byte structure and hold at least one double-byte pair.
    private static func isPlausibleShiftJIS(_ bytes: [UInt8]) -> Bool {
        var pairs = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 || (0xA1...0xDF).contains(byte) {
                index += 1
            } else if (0x81...0x9F).contains(byte) || (0xE0...0xFC).contains(byte) {
                guard index + 1 < bytes.count else { return false }
                let trail = bytes[index + 1]
                guard (0x40...0x7E).contains(trail) || (0x80...0xFC).contains(trail) else { return false }
                pairs += 1
                index += 2
            } else {
                return false
            }
        }
        return pairs > 0
    }

    /// The text of `bytes`, which never include the byte-order mark.
    fileprivate func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        switch self {
        case .utf8, .utf8BOM:
            return String(validating: bytes, as: UTF8.self)
        case .utf16LE, .utf16BE:
            // Whole code units only; Foundation refuses unpaired surrogates.
            guard bytes.count % 2 == 0 else { return nil }
            return bytes.isEmpty ? "" : String(data: Data(bytes), encoding: self == .utf16LE ? .utf16LittleEndian : .utf16BigEndian)
        case .shiftJIS:
            // swift-corelibs-foundation's .shiftJIS is CP932 (0x8160 is U+FF5E, 0x8740 is ①).
            return bytes.isEmpty ? "" : String(data: Data(bytes), encoding: .shiftJIS)
        case .windows1252:
            return Windows1252.decode(bytes)
        }
    }

    /// `text` as bytes, or nil when a character cannot be written in this encoding.
    fileprivate func encodeBytes(_ text: String) -> [UInt8]? {
        switch self {
        case .utf8, .utf8BOM:
            return Array(text.utf8)
        case .utf16LE, .utf16BE:
            return text.data(using: self == .utf16LE ? .utf16LittleEndian : .utf16BigEndian).map { [UInt8]($0) }
        case .shiftJIS:
            // Legacy encodings only have precomposed letters (が, é), so compose first.
            let composed = ShiftJIS.substitutingCP932Forms(text.precomposedStringWithCanonicalMapping)
            guard let data = composed.data(using: .shiftJIS, allowLossyConversion: false) else { return nil }
            // Refuse any best-fit substitution the converter might make: the value must read back as written.
            guard String(data: data, encoding: .shiftJIS) == composed else { return nil }
            return [UInt8](data)
        case .windows1252:
            return Windows1252.encode(text.precomposedStringWithCanonicalMapping)
        }
    }
}

/// Shift-JIS writing help: characters that JIS-minded software (macOS input methods among them)
/// produces where CP932 has a look-alike at the same JIS code.
private enum ShiftJIS {
    /// The CP932 character for each JIS X 0208 character that CP932 maps to a different code point
    /// (the "wave dash problem"), so that 〜 typed on a Mac can still be written.
    static let cp932Forms: [Unicode.Scalar: Unicode.Scalar] = [
        "\u{301C}": "\u{FF5E}", "\u{2016}": "\u{2225}", "\u{2212}": "\u{FF0D}", "\u{2014}": "\u{2015}",
        "\u{00A2}": "\u{FFE0}", "\u{00A3}": "\u{FFE1}", "\u{00AC}": "\u{FFE2}",
    ]

    static func substitutingCP932Forms(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { cp932Forms[$0] != nil }) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.map { cp932Forms[$0] ?? $0 })
        return String(scalars)
    }
}

/// Windows-1252 by table. Foundation's converter refuses the five bytes the code page leaves
/// undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D), which would make a whole sheet unreadable; here they
/// read as the C1 controls of the same value, as browsers do, and write back as the same bytes.
private enum Windows1252 {
    /// The characters of bytes 0x80–0x9F; every other byte is the Latin-1 character of its value.
    static let high: [Unicode.Scalar] = [
        "\u{20AC}", "\u{0081}", "\u{201A}", "\u{0192}", "\u{201E}", "\u{2026}", "\u{2020}", "\u{2021}",
        "\u{02C6}", "\u{2030}", "\u{0160}", "\u{2039}", "\u{0152}", "\u{008D}", "\u{017D}", "\u{008F}",
        "\u{0090}", "\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}", "\u{2022}", "\u{2013}", "\u{2014}",
        "\u{02DC}", "\u{2122}", "\u{0161}", "\u{203A}", "\u{0153}", "\u{009D}", "\u{017E}", "\u{0178}",
    ]

    static let bytesOfHigh: [Unicode.Scalar: UInt8] = Dictionary(
        uniqueKeysWithValues: high.enumerated().map { ($0.element, UInt8(0x80 + $0.offset)) })

    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            scalars.append((0x80...0x9F).contains(byte) ? high[Int(byte) - 0x80] : Unicode.Scalar(byte))
        }
        return String(scalars)
    }

    static func encode(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            if let byte = bytesOfHigh[scalar] {
                bytes.append(byte)
            } else if scalar.value < 0x80 || (0xA0...0xFF).contains(scalar.value) {
                bytes.append(UInt8(scalar.value))
            } else {
                return nil
            }
        }
        return bytes
    }
}

/// Why a CUE sheet could not be read or rewritten, with the line to look at when there is one.
struct CueSheetError: Error, Sendable, CustomStringConvertible {
    /// The sheet's name as the caller gave it (usually its file name).
    let name: String
    /// The line the problem is on, from 1; nil for problems of the whole sheet (no FILE, too large).
    let line: Int?
    /// What is wrong, in words for the person who has to fix the sheet.
    let reason: String

    /// "album.cue: line 12: INDEX 01 is not mm:ss:ff", or without the line part.
    var description: String {
        if let line { "\(name): line \(line): \(reason)" } else { "\(name): \(reason)" }
    }
}

/// A parsed CUE sheet: the album-level fields and the audio tracks of the image it describes,
/// enough to split one image file (or several) into tracks and to correct their tags in place.
struct CueSheet: Sendable, Equatable {
    /// One audio track as the sheet describes it; times are seconds from the start of `file`.
    struct Track: Sendable, Equatable {
        /// The number on the TRACK line (1–99 on a real CD; larger numbers are tolerated).
        var number: Int
        /// The FILE that holds this track's INDEX 01, as written in the sheet (usually relative).
        var file: String
        /// TITLE within the track.
        var title: String?
        /// PERFORMER within the track; nil means the album's performer applies.
        var performer: String?
        /// SONGWRITER within the track.
        var songwriter: String?
        /// ISRC within the track.
        var isrc: String?
        /// INDEX 00, where the pause before the track begins; nil when there is none or when it lies in
        /// another file than `start` (then it says nothing about this track's file).
        var pregap: Double?
        /// INDEX 01, where the track itself begins.
        var start: Double
    }

    /// A stretch of one audio file to cut out as one track.
    struct Slice: Sendable, Equatable {
        /// The track number; 0 for the hidden track before track 1.
        var number: Int
        /// The audio file, as written in the sheet.
        var file: String
        /// Seconds from the start of `file`.
        var start: Double
        /// Seconds from the start of `file`; nil runs to the end of the file (its duration unknown).
        var end: Double?
        /// The sheet's track; nil for the hidden track, which the sheet does not describe.
        var track: Track?
    }

    /// The name the sheet was parsed under, kept to name it in errors from `rewritten`.
    var name: String
    /// The album's TITLE (before any TRACK).
    var title: String?
    /// The album's PERFORMER (before any TRACK), i.e. the album artist.
    var performer: String?
    /// The album's SONGWRITER (before any TRACK).
    var songwriter: String?
    /// REM GENRE, as EAC and foobar2000 write it.
    var genre: String?
    /// REM DATE, usually a year.
    var date: String?
    /// CATALOG, the disc's UPC/EAN.
    var catalog: String?
    /// REM COMMENT (often the ripper's name and version).
    var comment: String?
    /// REM DISCNUMBER, for one disc of a set.
    var discNumber: Int?
    /// REM TOTALDISCS.
    var discCount: Int?
    /// The FILE names in the order they first appear, each once, as written.
    var files: [String]
    /// The audio tracks in sheet order; data and other non-audio tracks are left out, as they hold no sound.
    var tracks: [Track]
    /// The encoding the sheet was read in, and so the one `rewritten` writes.
    var encoding: TextEncoding

    /// Sheets larger than this are not CUE sheets: a 99-track sheet with every field is tens of KiB.
    static let maxBytes = 1 << 20

    /// CD time is counted in frames of 1/75 second.
    static let framesPerSecond = 75

    /// Parses a sheet from its bytes, detecting the encoding. `name` is only used in errors.
    static func parse(_ data: Data, name: String) throws(CueSheetError) -> CueSheet {
        guard data.count <= maxBytes else {
            throw CueSheetError(name: name, line: nil, reason: "is \(data.count) bytes, more than a CUE sheet's \(maxBytes)")
        }
        let encoding = TextEncoding.detect(data)
        let bytes = try Self.parsingBytes(data, encoding: encoding, name: name)
        let lines = try Self.lines(of: bytes, encoding: encoding.parsedAs, name: name)
        var builder = Builder(name: name, encoding: encoding)
        for line in lines {
            try builder.read(line)
        }
        return try builder.finish()
    }

    /// How the sheet is cut: each track from its INDEX 01 to the next track's INDEX 01 in the same
    /// file (so the next track's pregap plays at the end of this one, as on a CD player), the last
    /// track of a file to that file's end, which is `fileDurations[file]` when given.
    /// Audio before track 1 longer than a second is a hidden track of its own, numbered 0.
    func slices(fileDurations: [String: Double]) -> [Slice] {
        var slices: [Slice] = []
        if let first = tracks.first, first.file == files.first, first.start > 1 {
            slices.append(Slice(number: 0, file: first.file, start: 0, end: first.start, track: nil))
        }
        for (index, track) in tracks.enumerated() {
            let next = tracks[(index + 1)...].first { $0.file == track.file }
            // A duration shorter than the start is a sheet for other audio; let the splitter find the file's real end.
            let end = next?.start ?? fileDurations[track.file].flatMap { $0 > track.start ? $0 : nil }
            slices.append(Slice(number: track.number, file: track.file, start: track.start, end: end, track: track))
        }
        return slices
    }

    /// `original` (the bytes this sheet was parsed from) with track `number`'s TITLE, PERFORMER,
    /// SONGWRITER and ISRC set: a changed line is rewritten, a missing one added after the TRACK line,
    /// a nil (or empty) value's line removed (with any duplicates). Every other byte, line ends and BOM
    /// included, stays as it was: the sheet is the ripper's record, and other tools read it too.
    func rewritten(
        original: Data, track number: Int, title: String?, performer: String?, songwriter: String?, isrc: String?
    ) throws(CueSheetError) -> Data {
        let bytes = try Self.parsingBytes(original, encoding: encoding, name: name)
        let lines = try Self.lines(of: bytes, encoding: encoding.parsedAs, name: name)
        guard let trackIndex = lines.firstIndex(where: { Self.isAudioTrackLine($0, number: number) }) else {
            throw CueSheetError(name: name, line: nil, reason: "has no audio TRACK \(number)")
        }
        let trackLine = lines[trackIndex]
        let blockEnd = lines[(trackIndex + 1)...].firstIndex { $0.keyword == "TRACK" } ?? lines.endIndex
        let block = (trackIndex + 1)..<blockEnd

        let wanted: [(keyword: String, value: String?)] = [
            ("TITLE", title), ("PERFORMER", performer), ("SONGWRITER", songwriter), ("ISRC", isrc),
        ]
        var encoded: [String: [UInt8]] = [:]
        for (keyword, value) in wanted {
            guard let value, !value.isEmpty else { continue }
            encoded[keyword] = try encodeValue(value, keyword: keyword, number: number, line: trackLine.number)
        }

        let indent =
            lines[block].first { !$0.keyword.isEmpty && $0.keyword != "FILE" }.map { Array(bytes[$0.indent]) }
            ?? Array(bytes[trackLine.indent]) + Array("  ".utf8)
        let lineEnd =
            trackLine.terminator.isEmpty
            ? (lines.first { !$0.terminator.isEmpty }.map { Array(bytes[$0.terminator]) } ?? [0x0A])
            : Array(bytes[trackLine.terminator])

        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 256)
        if let first = lines.first { output.append(contentsOf: bytes[..<first.content.lowerBound]) }
        var written: Set<String> = []
        for (index, line) in lines.enumerated() {
            guard block.contains(index), wanted.contains(where: { $0.keyword == line.keyword }) else {
                output.append(contentsOf: bytes[line.content])
                output.append(contentsOf: bytes[line.terminator])
                if index == trackIndex {
                    if line.terminator.isEmpty { output.append(contentsOf: lineEnd) }
                    for (keyword, _) in wanted where Self.firstLine(keyword, in: lines[block]) == nil {
                        guard let value = encoded[keyword] else { continue }
                        output.append(contentsOf: indent + Array(keyword.utf8) + Self.quoted(value) + lineEnd)
                    }
                }
                continue
            }
            // Later duplicates of a field go, so the sheet says one thing.
            guard let value = encoded[line.keyword], written.insert(line.keyword).inserted else { continue }
            let current = wanted.first { $0.keyword == line.keyword }?.value
            if Self.value(line.arguments) == current {
                output.append(contentsOf: bytes[line.content])
            } else {
                output.append(contentsOf: bytes[line.indent])
                output.append(contentsOf: bytes[line.keywordBytes])
                output.append(contentsOf: Self.quoted(value))
            }
            output.append(contentsOf: bytes[line.terminator])
        }
        guard encoding != encoding.parsedAs else { return Data(output) }
        // A UTF-16 sheet was rewritten as UTF-8; it goes back in its own encoding, mark first.
        guard let text = String(validating: output, as: UTF8.self), let body = encoding.encodeBytes(text) else {
            throw CueSheetError(name: name, line: nil, reason: "cannot be written back as \(encoding.displayName)")
        }
        return Data((encoding == .utf16LE ? [0xFF, 0xFE] : [0xFE, 0xFF]) + body)
    }

    /// The bytes a sheet is parsed from: its own, or for UTF-16 its text as UTF-8 (without the
    /// mark), since lines are split at single bytes.
    private static func parsingBytes(_ data: Data, encoding: TextEncoding, name: String) throws(CueSheetError) -> [UInt8] {
        guard encoding != encoding.parsedAs else { return [UInt8](data) }
        guard let text = encoding.decode(data) else { throw CueSheetError(name: name, line: nil, reason: "is not valid \(encoding.displayName)") }
        return Array(text.utf8)
    }

    // MARK: - Writing values

    private func encodeValue(_ value: String, keyword: String, number: Int, line: Int) throws(CueSheetError) -> [UInt8] {
        let field = "\(keyword) of TRACK \(Self.twoDigits(number))"
        if value.contains("\"") {
            throw CueSheetError(name: name, line: line, reason: "\(field) contains a double quote (\"), which a CUE sheet cannot hold")
        }
        if value.contains(where: \.isNewline) {
            throw CueSheetError(name: name, line: line, reason: "\(field) contains a line break, which a CUE sheet cannot hold")
        }
        guard let bytes = encoding.parsedAs.encodeBytes(value) else {
            throw CueSheetError(
                name: name, line: line, reason: "\(field) \"\(value)\" cannot be written in the sheet's encoding, \(encoding.displayName)")
        }
        return bytes
    }

    private static func quoted(_ value: [UInt8]) -> [UInt8] {
        [0x20, 0x22] + value + [0x22]
    }

    private static func twoDigits(_ number: Int) -> String {
        number < 10 && number >= 0 ? "0\(number)" : "\(number)"
    }

    private static func isAudioTrackLine(_ line: Line, number: Int) -> Bool {
        guard line.keyword == "TRACK" else { return false }
        let words = line.arguments.split(whereSeparator: \.isWhitespace)
        guard let first = words.first, let parsed = trackNumber(first), parsed == number else { return false }
        return words.count < 2 || words[1].uppercased() == "AUDIO"
    }

    private static func firstLine(_ keyword: String, in lines: ArraySlice<Line>) -> Line? {
        lines.first { $0.keyword == keyword }
    }

    // MARK: - Lines

    /// One line of the sheet: byte ranges into the sheet (for writing it back unchanged) and its
    /// decoded command.
    private struct Line {
        /// From 1, for errors.
        var number: Int
        /// The line without its line end.
        var content: Range<Int>
        /// CR, LF, CR LF, or empty on a last line without one.
        var terminator: Range<Int>
        /// The leading spaces and tabs.
        var indent: Range<Int>
        /// The command word as written (its case kept when the line is rewritten).
        var keywordBytes: Range<Int>
        /// The command word in upper case; empty on a blank line.
        var keyword: String
        /// The decoded text after the command word, trimmed.
        var arguments: Substring
    }

    /// The sheet's lines, each decoded on its own: CR and LF bytes never occur inside a character in
    /// these encodings, so splitting the bytes first is safe and keeps exact byte ranges.
    private static func lines(of bytes: [UInt8], encoding: TextEncoding, name: String) throws(CueSheetError) -> [Line] {
        var lines: [Line] = []
        var start = bytes.starts(with: TextEncoding.byteOrderMark) && encoding != .windows1252 && encoding != .shiftJIS ? 3 : 0
        while start < bytes.count || (start == bytes.count && lines.isEmpty) {
            var end = start
            while end < bytes.count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
            var next = end
            if next < bytes.count { next += bytes[next] == 0x0D && next + 1 < bytes.count && bytes[next + 1] == 0x0A ? 2 : 1 }
            var indentEnd = start
            while indentEnd < end, bytes[indentEnd] == 0x20 || bytes[indentEnd] == 0x09 { indentEnd += 1 }
            var keywordEnd = indentEnd
            while keywordEnd < end, bytes[keywordEnd] != 0x20, bytes[keywordEnd] != 0x09 { keywordEnd += 1 }
            let number = lines.count + 1
            guard let text = encoding.decode(bytes[keywordEnd..<end]) else {
                throw CueSheetError(name: name, line: number, reason: "is not valid \(encoding.displayName)")
            }
            // Command words are ASCII; anything else in that place is an unknown command.
            let keyword = String(decoding: bytes[indentEnd..<keywordEnd], as: UTF8.self).uppercased()
            lines.append(
                Line(
                    number: number, content: start..<end, terminator: end..<next, indent: start..<indentEnd,
                    keywordBytes: indentEnd..<keywordEnd, keyword: keyword, arguments: trimmed(text[...])))
            start = next
        }
        return lines
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return text[first...last]
    }

    /// The value of `TITLE "a b"` or of `TITLE a b`: the quoted part (to the end of the line when the
    /// closing quote is missing), or else the whole rest. Empty values count as absent.
    private static func value(_ arguments: Substring) -> String? {
        var text = arguments
        if text.first == "\"" {
            text = text.dropFirst()
            if let close = text.firstIndex(of: "\"") { text = text[..<close] }
        }
        return text.isEmpty ? nil : String(text)
    }

    /// A FILE line's name: `FILE "a b.flac" WAVE`, or unquoted `FILE a b.flac WAVE` (the type is the
    /// last word, and never has a dot) or without a type at all.
    private static func fileName(_ arguments: Substring) -> String? {
        if arguments.first == "\"" { return value(arguments) }
        if let space = arguments.lastIndex(where: { $0 == " " || $0 == "\t" }), !arguments[space...].contains(".") {
            return value(trimmed(arguments[..<space]))
        }
        return value(arguments)
    }

    private static func trackNumber(_ word: Substring) -> Int? {
        word.allSatisfy(\.isASCII) ? Int(word) : nil
    }

    /// Frames in `mm:ss:ff`; minutes may run past 99 (images longer than a CD).
    private static func frames(_ word: Substring) -> Int? {
        let parts = word.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.count <= 9 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let minutes = Int(parts[0]), let seconds = Int(parts[1]), let frames = Int(parts[2]),
            seconds < 60, frames < framesPerSecond
        else { return nil }
        return (minutes * 60 + seconds) * framesPerSecond + frames
    }

    private static func time(_ frames: Int) -> String {
        let seconds = frames / framesPerSecond
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(pad(seconds / 60)):\(pad(seconds % 60)):\(pad(frames % framesPerSecond))"
    }

    // MARK: - Parsing

    /// The parse in progress: the sheet so far and the track whose lines are being read.
    private struct Builder {
        /// A track until its lines end, with the line numbers and files its errors and checks need.
        struct Pending {
            var track: Track
            var line: Int
            var pregap: (frames: Int, file: String)?
            var start: (frames: Int, file: String, line: Int)?
        }

        /// The sheet so far; its tracks are the finished ones.
        var sheet: CueSheet
        var name: String { sheet.name }
        /// The latest FILE line's name: the file the following INDEX lines point into.
        var file: String?
        /// Whether a TRACK line was seen, after which TITLE and the like belong to tracks.
        var inTracks = false
        /// The audio track being read; nil within a data track, whose lines are skipped.
        var pending: Pending?
        /// Audio track numbers so far: `rewritten` and the slices find a track by its number.
        var numbers: Set<Int> = []
        /// Each file's last track start so far, to catch starts that go backwards.
        var lastStart: [String: (number: Int, frames: Int)] = [:]

        init(name: String, encoding: TextEncoding) {
            sheet = CueSheet(
                name: name, title: nil, performer: nil, songwriter: nil, genre: nil, date: nil, catalog: nil, comment: nil,
                discNumber: nil, discCount: nil, files: [], tracks: [], encoding: encoding)
        }

        func error(_ line: Int?, _ reason: String) -> CueSheetError {
            CueSheetError(name: name, line: line, reason: reason)
        }

        mutating func read(_ line: Line) throws(CueSheetError) {
            let arguments = line.arguments
            switch line.keyword {
            case "FILE":
                guard let name = CueSheet.fileName(arguments) else { throw error(line.number, "FILE has no file name") }
                file = name
                if !sheet.files.contains(name) { sheet.files.append(name) }
            case "TRACK":
                try finishTrack()
                try startTrack(line)
            case "INDEX":
                try readIndex(line)
            case "TITLE":
                set(\.title, album: \.title, CueSheet.value(arguments))
            case "PERFORMER":
                set(\.performer, album: \.performer, CueSheet.value(arguments))
            case "SONGWRITER":
                set(\.songwriter, album: \.songwriter, CueSheet.value(arguments))
            case "ISRC":
                if pending?.track.isrc == nil { pending?.track.isrc = CueSheet.value(arguments) }
            case "CATALOG":
                if sheet.catalog == nil { sheet.catalog = CueSheet.value(arguments) }
            case "REM":
                readRemark(arguments)
            default:
                break
            }
        }

        /// Sets a track's field within a track, the album's before the first TRACK; the first line wins.
        mutating func set(_ trackField: WritableKeyPath<Track, String?>, album: WritableKeyPath<CueSheet, String?>, _ value: String?) {
            if inTracks {
                if pending?.track[keyPath: trackField] == nil { pending?.track[keyPath: trackField] = value }
            } else if sheet[keyPath: album] == nil {
                sheet[keyPath: album] = value
            }
        }

        /// REM fields EAC and foobar2000 write for the album; any other REM, or one within a track, is a comment.
        mutating func readRemark(_ arguments: Substring) {
            guard !inTracks else { return }
            let key = arguments.prefix { $0 != " " && $0 != "\t" }
            let value = CueSheet.value(CueSheet.trimmed(arguments[key.endIndex...]))
            let number = value.flatMap { Int($0.prefix { $0.isASCII && $0.isNumber }) }
            switch key.uppercased() {
            case "GENRE": sheet.genre = sheet.genre ?? value
            case "DATE": sheet.date = sheet.date ?? value
            case "COMMENT": sheet.comment = sheet.comment ?? value
            case "DISCNUMBER": sheet.discNumber = sheet.discNumber ?? number
            case "TOTALDISCS": sheet.discCount = sheet.discCount ?? number
            default: break
            }
        }

        mutating func startTrack(_ line: Line) throws(CueSheetError) {
            let words = line.arguments.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = words.first, let number = CueSheet.trackNumber(first) else {
                throw error(line.number, "TRACK has no track number")
            }
            guard number >= 1 else { throw error(line.number, "TRACK \(first) is not a track number (they start at 01)") }
            guard let file else { throw error(line.number, "TRACK \(first) comes before any FILE") }
            inTracks = true
            // A missing type is read as audio: the one kind a music rip has.
            guard words.count < 2 || words[1].uppercased() == "AUDIO" else {
                pending = nil
                return
            }
            guard numbers.insert(number).inserted else { throw error(line.number, "TRACK \(first) appears twice") }
            pending = Pending(track: Track(number: number, file: file, start: 0), line: line.number)
        }

        mutating func readIndex(_ line: Line) throws(CueSheetError) {
            guard pending != nil, let file else { return }
            let words = line.arguments.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = words.first, let index = CueSheet.trackNumber(first) else { return }
            guard words.count >= 2, let frames = CueSheet.frames(words[1]) else {
                let written = words.count >= 2 ? ": \"\(words[1])\"" : ""
                throw error(line.number, "INDEX \(first) is not mm:ss:ff\(written)")
            }
            if index == 0, pending?.pregap == nil {
                pending?.pregap = (frames, file)
            } else if index == 1, pending?.start == nil {
                pending?.start = (frames, file, line.number)
            }
        }

        mutating func finishTrack() throws(CueSheetError) {
            guard var pending else { return }
            self.pending = nil
            let number = CueSheet.twoDigits(pending.track.number)
            guard let start = pending.start else { throw error(pending.line, "TRACK \(number) has no INDEX 01") }
            if let last = lastStart[start.file], start.frames <= last.frames {
                throw error(
                    start.line,
                    "TRACK \(number) starts at \(CueSheet.time(start.frames)), not after TRACK "
                        + "\(CueSheet.twoDigits(last.number)) at \(CueSheet.time(last.frames)) in \"\(start.file)\"")
            }
            lastStart[start.file] = (pending.track.number, start.frames)
            pending.track.file = start.file
            pending.track.start = Double(start.frames) / Double(CueSheet.framesPerSecond)
            // A pregap in another file (gaps saved at the end of the previous track's file) or after
            // the start says nothing about where this track's file begins.
            if let pregap = pending.pregap, pregap.file == start.file, pregap.frames <= start.frames {
                pending.track.pregap = Double(pregap.frames) / Double(CueSheet.framesPerSecond)
            }
            sheet.tracks.append(pending.track)
        }

        mutating func finish() throws(CueSheetError) -> CueSheet {
            try finishTrack()
            guard !sheet.files.isEmpty else { throw error(nil, "has no FILE line") }
            guard !sheet.tracks.isEmpty else { throw error(nil, "has no audio TRACK") }
            return sheet
        }
    }
}

import Foundation
import ShelfCore

/// One mistake in a config file: the file, the line and column (from 1; 0 when the mistake is
/// the file's as a whole, such as one that cannot be read), and the reason.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as it was named.
    public let file: String
    /// The line of the mistake, from 1 (0: the whole file).
    public let line: Int
    /// The column of the mistake, from 1 (0: the whole line).
    public let column: Int
    /// Why it is a mistake.
    public let reason: String

    /// A mistake at `line`:`column` of `file`.
    public init(file: String, line: Int, column: Int, reason: String) {
        (self.file, self.line, self.column, self.reason) = (file, line, column, reason)
    }

    /// `FILE:LINE:COLUMN: reason`, the shape compilers use, so editors can jump to it.
    public var description: String {
        switch (line, column) {
        case (0, _): "\(file): \(reason)"
        case (_, 0): "\(file):\(line): \(reason)"
        default: "\(file):\(line):\(column): \(reason)"
        }
    }
}

/// Every mistake found in one config file (at least one), so that a single run names them all.
public struct ConfigFileError: Error, Sendable, CustomStringConvertible {
    /// The file, as it was named.
    public let file: String
    /// The mistakes, in file order.
    public let errors: [ConfigError]

    /// The mistakes of `file`.
    public init(file: String, errors: [ConfigError]) {
        self.file = file
        self.errors = errors
    }

    public var description: String { errors.map(\.description).joined(separator: "; ") }
}

/// A value of the TOML subset Shelf reads.
public enum ConfigValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case boolean(Bool)
    case strings([String])

    /// What it is, for messages ("expects a string, got an integer").
    public var kind: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .boolean: "a boolean"
        case .strings: "an array of strings"
        }
    }
}

/// A small reader for the subset of TOML that Shelf's config file uses: `key = value` lines,
/// `[table]` headers, `#` comments, basic strings with escapes and literal strings, integers,
/// booleans, and arrays of strings (over several lines if need be). Anything else TOML has is
/// reported as unsupported rather than half-read. It collects every mistake instead of stopping
/// at the first, skipping the rest of a bad line.
public struct ConfigReader {
    /// One `key = value`: the table it is in (nil at the top), where it is, and the value.
    public struct Entry: Sendable, Equatable {
        /// The `[table]` it is under, dotted; nil before any header.
        public let table: String?
        /// The key.
        public let key: String
        /// The value.
        public let value: ConfigValue
        /// The line of the key.
        public let line: Int
        /// The column of the key.
        public let column: Int
        /// The column of the value.
        public let valueColumn: Int
    }

    /// A `[table]` header: its dotted name and where it is.
    public struct Table: Sendable, Equatable {
        public let name: String
        public let line: Int
        public let column: Int
    }

    /// What a file holds: its entries and headers in order, and its syntax mistakes.
    public struct Document: Sendable {
        public var entries: [Entry] = []
        public var tables: [Table] = []
        public var errors: [ConfigError] = []
    }

    private struct Failure: Error {
        let line: Int
        let column: Int
        let reason: String
    }

    private let file: String
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    private init(text: String, file: String) {
        self.file = file
        scalars = Array(text.unicodeScalars)
    }

    /// Reads `text` (the contents of `file`, which names it in errors).
    public static func parse(_ text: String, file: String) -> Document {
        var reader = ConfigReader(text: text, file: file)
        return reader.document()
    }

    /// Reads the file at `path`; an unreadable or non-UTF-8 file is one error at line 0.
    public static func read(path: String) -> Document {
        guard let data = FileContents.read(path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (permissions?)" : "does not exist"
            return Document(errors: [ConfigError(file: path, line: 0, column: 0, reason: reason)])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return Document(errors: [ConfigError(file: path, line: 0, column: 0, reason: "is not UTF-8 text")])
        }
        return parse(text, file: path)
    }

    private var column: Int { index - lineStart + 1 }
    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func fail(_ reason: String) -> Failure { Failure(line: line, column: column, reason: reason) }

    private mutating func advance() {
        if current == "\n" {
            line += 1
            lineStart = index + 1
        }
        index += 1
    }

    private mutating func skipSpaces() {
        while let c = current, c == " " || c == "\t" { advance() }
    }

    /// Spaces, then a comment if there is one; stops before the newline.
    private mutating func skipSpacesAndComment() {
        skipSpaces()
        if current == "#" {
            while let c = current, c != "\n" { advance() }
        }
    }

    /// After a line's content: only spaces and a comment may follow, then a newline or the end.
    private mutating func endOfLine(after what: String) throws(Failure) {
        skipSpacesAndComment()
        if current == "\r" { advance() }
        guard let c = current else { return }
        guard c == "\n" else { throw fail("expected the end of the line after \(what), got '\(c)'") }
        advance()
    }

    private mutating func document() -> Document {
        var document = Document()
        var table: String?
        var seenKeys: [String: Int] = [:]
        var seenTables: [String: Int] = [:]
        while current != nil {
            do throws(Failure) {
                skipSpacesAndComment()
                switch current {
                case nil: break
                case "\n": advance()
                case "\r": try endOfLine(after: "nothing")
                case "[":
                    let (startLine, startColumn) = (line, column)
                    advance()
                    if current == "[" { throw fail("arrays of tables ([[…]]) are not supported") }
                    skipSpaces()
                    let name = try dottedKey()
                    skipSpaces()
                    guard current == "]" else { throw fail("expected ']' to close the table header") }
                    advance()
                    if let earlier = seenTables[name] {
                        throw Failure(line: startLine, column: startColumn, reason: "table [\(name)] is already defined on line \(earlier)")
                    }
                    try endOfLine(after: "the table header")
                    seenTables[name] = startLine
                    table = name
                    document.tables.append(Table(name: name, line: startLine, column: startColumn))
                default:
                    let (keyLine, keyColumn) = (line, column)
                    let key = try dottedKey()
                    skipSpaces()
                    guard current == "=" else { throw fail("expected '=' after the key '\(key)'") }
                    advance()
                    skipSpaces()
                    let valueColumn = column
                    let value = try self.value()
                    let full = table.map { "\($0).\(key)" } ?? key
                    if let earlier = seenKeys[full] {
                        throw Failure(line: keyLine, column: keyColumn, reason: "'\(key)' is already set on line \(earlier)")
                    }
                    try endOfLine(after: "the value")
                    seenKeys[full] = keyLine
                    document.entries.append(Entry(table: table, key: key, value: value, line: keyLine, column: keyColumn, valueColumn: valueColumn))
                }
            } catch {
                document.errors.append(ConfigError(file: file, line: error.line, column: error.column, reason: error.reason))
                // Recover at the next line, so one mistake does not hide the ones after it.
                while let c = current, c != "\n" { advance() }
                if current == "\n" { advance() }
            }
        }
        return document
    }

    private static func isBare(_ c: Unicode.Scalar) -> Bool {
        (c >= "A" && c <= "Z") || (c >= "a" && c <= "z") || (c >= "0" && c <= "9") || c == "_" || c == "-"
    }

    /// A key, bare (`max-transcodes`) or quoted, with dotted parts joined by `.`.
    private mutating func dottedKey() throws(Failure) -> String {
        var parts: [String] = []
        while true {
            skipSpaces()
            if current == "\"" {
                parts.append(try basicString())
            } else if current == "'" {
                parts.append(try literalString())
            } else {
                var key = ""
                while let c = current, Self.isBare(c) {
                    key.unicodeScalars.append(c)
                    advance()
                }
                guard !key.isEmpty else {
                    throw fail(current.map { "expected a key (letters, digits, '-' and '_'), got '\($0)'" } ?? "expected a key")
                }
                parts.append(key)
            }
            skipSpaces()
            guard current == "." else { return parts.joined(separator: ".") }
            advance()
        }
    }

    private mutating func value() throws(Failure) -> ConfigValue {
        switch current {
        case "\"": return .string(try basicString())
        case "'": return .string(try literalString())
        case "[": return .strings(try stringArray())
        case "{": throw fail("inline tables ({…}) are not supported; use a [table]")
        case nil, "\n", "\r", "#": throw fail("expected a value")
        default:
            let start = column
            var word = ""
            while let c = current, c != " ", c != "\t", c != "\n", c != "\r", c != "#", c != ",", c != "]" {
                word.unicodeScalars.append(c)
                advance()
            }
            if word == "true" { return .boolean(true) }
            if word == "false" { return .boolean(false) }
            if let integer = Self.integer(word) { return .integer(integer) }
            let reason: String
            if word.contains(":") || (word.count >= 10 && word.dropFirst(4).first == "-") {
                reason = "dates and times are not supported; quote it as a string"
            } else if Double(word.replacingOccurrences(of: "_", with: "")) != nil || ["inf", "+inf", "-inf", "nan", "+nan", "-nan"].contains(word) {
                reason = "floating-point numbers are not supported; use a whole number or a string"
            } else {
                reason = "'\(word)' is not a value; strings need quotes (\"\(word)\")"
            }
            throw Failure(line: line, column: start, reason: reason)
        }
    }

    /// A decimal integer, `_` allowed between digits as TOML allows; leading zeros are not.
    private static func integer(_ word: String) -> Int? {
        var digits = Substring(word)
        var sign = ""
        if let first = digits.first, first == "+" || first == "-" {
            sign = first == "-" ? "-" : ""
            digits = digits.dropFirst()
        }
        guard let first = digits.first, first.isASCII, first.isNumber, !(first == "0" && digits.count > 1),
            !digits.hasSuffix("_"), !digits.contains("__")
        else { return nil }
        let plain = digits.replacingOccurrences(of: "_", with: "")
        guard plain.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(sign + plain)
    }

    private mutating func basicString() throws(Failure) -> String {
        advance()  // the opening quote
        if current == "\"" && index + 1 < scalars.count && scalars[index + 1] == "\"" {
            throw fail("multi-line strings (\"\"\"…\"\"\") are not supported")
        }
        var text = ""
        while true {
            guard let c = current, c != "\n" else { throw fail("the string is not closed on its line (a '\"' is missing)") }
            advance()
            switch c {
            case "\"": return text
            case "\\":
                let escapeColumn = column - 1
                guard let e = current else { throw fail("the string ends in an escape") }
                advance()
                switch e {
                case "b": text.unicodeScalars.append("\u{8}")
                case "t": text.unicodeScalars.append("\t")
                case "n": text.unicodeScalars.append("\n")
                case "f": text.unicodeScalars.append("\u{C}")
                case "r": text.unicodeScalars.append("\r")
                case "\"": text.unicodeScalars.append("\"")
                case "\\": text.unicodeScalars.append("\\")
                case "u", "U":
                    let count = e == "u" ? 4 : 8
                    var hex = ""
                    for _ in 0..<count {
                        guard let h = current, h.properties.isASCIIHexDigit else {
                            throw Failure(line: line, column: escapeColumn, reason: "\\\(e) needs \(count) hex digits")
                        }
                        hex.unicodeScalars.append(h)
                        advance()
                    }
                    guard let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                        throw Failure(line: line, column: escapeColumn, reason: "\\\(e)\(hex) is not a Unicode scalar value")
                    }
                    text.unicodeScalars.append(scalar)
                default:
                    throw Failure(line: line, column: escapeColumn, reason: "unknown escape '\\\(e)' (use \\\\ for a backslash)")
                }
            default:
                if c.value < 0x20 && c != "\t" || c.value == 0x7F {
                    throw Failure(line: line, column: column - 1, reason: "control characters must be escaped in strings")
                }
                text.unicodeScalars.append(c)
            }
        }
    }

    /// `'…'`: every character as written, no escapes.
    private mutating func literalString() throws(Failure) -> String {
        advance()
        if current == "'" && index + 1 < scalars.count && scalars[index + 1] == "'" {
            throw fail("multi-line strings ('''…''') are not supported")
        }
        var text = ""
        while true {
            guard let c = current, c != "\n" else { throw fail("the string is not closed on its line (a \"'\" is missing)") }
            advance()
            if c == "'" { return text }
            text.unicodeScalars.append(c)
        }
    }

    /// Spaces, newlines and comments inside an array.
    private mutating func skipArraySpace() {
        while true {
            skipSpacesAndComment()
            guard let c = current, c == "\n" || c == "\r" else { return }
            advance()
        }
    }

    /// `["a", "b"]`, over several lines if need be, a trailing comma allowed.
    private mutating func stringArray() throws(Failure) -> [String] {
        advance()
        var items: [String] = []
        while true {
            skipArraySpace()
            switch current {
            case "]":
                advance()
                return items
            case "\"": items.append(try basicString())
            case "'": items.append(try literalString())
            case nil: throw fail("the array is not closed (a ']' is missing)")
            default:
                throw fail("arrays hold only strings here; got '\(current.map(String.init) ?? "")'")
            }
            skipArraySpace()
            switch current {
            case ",": advance()
            case "]": continue
            default: throw fail("expected ',' or ']' in the array")
            }
        }
    }
}

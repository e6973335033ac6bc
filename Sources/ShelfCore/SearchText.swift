import Foundation

/// How text becomes search tokens: one function for what the mirror indexes and for what a user
/// types, so the two always meet.
///
/// Tokenizing, and why:
/// - Everything is folded first as filters fold it (case, diacritics, width, katakana as
///   hiragana), so "beyonce" meets "Beyoncé", "ｈｉｋａｒｕ" meets "hikaru", "ひかる" meets "ヒカル".
/// - Words are runs of letters, digits and combining marks; anything else separates them, except
///   an apostrophe between letters, which is dropped ("don't" is the token "dont"), because people
///   type names without it.
/// - Scripts written without spaces (Han, hiragana, katakana) have no word boundaries a tokenizer
///   could find without a dictionary, so each of their characters is a token of its own. A typed
///   run of them becomes a phrase (consecutive tokens), which finds it anywhere inside a word:
///   "宇多" is the phrase 宇 多 and finds "宇多田ヒカル"; a one-character query is one token.
///   Unigrams rather than bigrams keep one-character queries exact and the index smaller.
/// - The index stores tokens separated by single spaces and SQLite's `ascii` tokenizer splits on
///   them: it keeps every non-ASCII byte inside a token, so the tokens SQLite indexes are exactly
///   these, and the direct path's matching (in Swift, over the same tokens) agrees by construction.
public enum SearchText {
    /// The tokens of a value, in order.
    public static func tokens(_ value: String?) -> [String] {
        guard let value, !value.isEmpty else { return [] }
        if let bytes = SortKey.asciiFolded(value) { return asciiTokens(bytes) }
        return scalarTokens(SortKey.foldedScalars(value))
    }

    /// `tokens` of folded scalars (any script).
    static func scalarTokens(_ scalars: [Unicode.Scalar]) -> [String] {
        var tokens: [String] = []
        var current = String.UnicodeScalarView()
        func flush() {
            if !current.isEmpty { tokens.append(String(current)) }
            current = String.UnicodeScalarView()
        }
        for (index, scalar) in scalars.enumerated() {
            if isUnsegmented(scalar) {
                flush()
                tokens.append(String(Character(scalar)))
            } else if isWordScalar(scalar) {
                current.append(scalar)
            } else if isApostrophe(scalar), !current.isEmpty, index + 1 < scalars.count, isWordScalar(scalars[index + 1]),
                !isUnsegmented(scalars[index + 1])
            {
                continue
            } else {
                flush()
            }
        }
        flush()
        return tokens
    }

    /// `tokens` of folded ASCII: words are runs of letters and digits (the only ASCII word
    /// characters), an apostrophe between word characters is dropped.
    static func asciiTokens(_ bytes: [UInt8]) -> [String] {
        @inline(__always) func isWord(_ byte: UInt8) -> Bool { (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) }
        var tokens: [String] = []
        var current: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            if isWord(byte) {
                current.append(byte)
            } else if byte == 0x27, !current.isEmpty, index + 1 < bytes.count, isWord(bytes[index + 1]) {
                continue
            } else if !current.isEmpty {
                tokens.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            }
        }
        if !current.isEmpty { tokens.append(String(decoding: current, as: UTF8.self)) }
        return tokens
    }

    /// The text an index column stores: the tokens joined by single spaces.
    public static func indexText(_ value: String?) -> String {
        tokens(value).joined(separator: " ")
    }

    /// True for characters of scripts written without spaces, each indexed as its own token.
    public static func isUnsegmented(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF,  // hiragana, katakana (with the prolonged sound mark)
            0x31F0...0x31FF,  // katakana phonetic extensions
            0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,  // Han
            0x20000...0x3FFFF:  // Han extensions
            return true
        default:
            return false
        }
    }

    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark, .privateUse:
            return true
        default:
            return false
        }
    }

    static func isApostrophe(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "'" || scalar == "\u{2019}"
    }
}

/// A parsed search: the typed words, each a run of tokens that must appear consecutively in one
/// field; every word is required, and the last word's last token matches as a prefix (unless it
/// is a character of an unsegmented script, which is a whole token already).
public struct SearchQuery: Sendable, Hashable {
    /// Each typed word's tokens, in order.
    public var words: [[String]]
    /// Whether the last token of the last word matches as a prefix ("beat" finds "beatles").
    public var prefixLast: Bool

    /// Parses typed text; words with no token (only punctuation) are dropped.
    public init(_ text: String) {
        words = text.split(whereSeparator: { $0.unicodeScalars.allSatisfy { SortKey.isSpace($0) } })
            .map { SearchText.tokens(String($0)) }
            .filter { !$0.isEmpty }
        prefixLast = words.last?.last.map { token in !token.unicodeScalars.contains(where: SearchText.isUnsegmented) } ?? false
    }

    /// True when nothing searchable was typed.
    public var isEmpty: Bool { words.isEmpty }

    /// The FTS5 expression: each word a quoted phrase (tokens hold only letters, digits and marks,
    /// never a quote), the last one with `*` when it matches as a prefix; words joined by AND.
    public var matchExpression: String { phrases.joined(separator: " ") }

    /// Each word as an FTS5 phrase.
    public var phrases: [String] {
        words.enumerated().map { index, tokens in
            "\"" + tokens.joined(separator: " ") + "\"" + (index == words.count - 1 && prefixLast ? "*" : "")
        }
    }

    /// The FTS5 expression requiring every word within `columns` (each word may sit in any of them).
    public func matchExpression(in columns: [String]) -> String {
        phrases.map { "{\(columns.joined(separator: " "))} : \($0)" }.joined(separator: " AND ")
    }

    /// Whether a word's phrase occurs in a field's tokens (consecutively; the last token of the
    /// last word as a prefix when `prefixLast`).
    public func phrase(_ word: Int, occursIn field: [String]) -> Bool {
        let tokens = words[word]
        let prefix = prefixLast && word == words.count - 1
        guard tokens.count <= field.count else { return false }
        for start in 0...(field.count - tokens.count) {
            var matched = true
            for (offset, token) in tokens.enumerated() {
                let candidate = field[start + offset]
                let isLast = offset == tokens.count - 1
                if !(candidate == token || (isLast && prefix && candidate.utf8.starts(with: token.utf8))) {
                    matched = false
                    break
                }
            }
            if matched { return true }
        }
        return false
    }
}

/// Where a search looks: tracks matching a filter, optionally only a playlist's.
/// Searching within an artist is the filter `artist:=NAME`.
public struct SearchScope: Sendable, Hashable {
    /// Only tracks matching this filter.
    public var filter: Filter
    /// Only tracks in this playlist (each track once, however often it is listed).
    public var playlist: PlaylistID?

    /// The whole library, narrowed by `filter` and `playlist` when given.
    public init(filter: Filter = .all, playlist: PlaylistID? = nil) {
        self.filter = filter
        self.playlist = playlist
    }
}

import Foundation

/// A query-language mistake: where it is (a 1-based character position) and what was expected.
public struct FilterParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var position: Int
    public var message: String
    public var description: String { "filter error at position \(position): \(message)" }
}

/// The command line's filter language, in the spirit of beets:
///
///     artist:beatles year:1965..1970 genre:=Rock -genre:Pop rating:>=80 "title:yellow sub" , love
///
/// Terms separated by spaces are all required; ` , ` separates alternatives (OR). `field:text`
/// contains, `field:=text` equals, `field:^text` starts with, `field:?` is blank or missing.
/// Numbers and dates (`YYYY-MM-DD`): `field:N`, `field:A..B` (either end may be left out),
/// `field:>N`, `>=`, `<`, `<=`. Flags: `compilation:yes|no`, `hasArtwork:yes|no`. A leading `-`
/// negates a term; a bare word matches any text field; quotes group words into one term.
public enum FilterParser {
    /// Parses `text` into a filter; an empty text is `.all`.
    public static func parse(_ text: String) throws -> Filter {
        let terms = try tokenize(text)
        var alternatives: [[Filter]] = [[]]
        for term in terms {
            if term.text == "," && !term.quoted {
                guard !(alternatives.last ?? []).isEmpty else {
                    throw FilterParseError(position: term.position, message: "expected a term before ','")
                }
                alternatives.append([])
                continue
            }
            alternatives[alternatives.count - 1].append(try parseTerm(term))
        }
        if alternatives.count > 1, alternatives.last?.isEmpty == true {
            throw FilterParseError(position: text.count + 1, message: "expected a term after ','")
        }
        let groups = alternatives.map { $0.count == 1 ? $0[0] : .and($0) }
        if groups.count == 1 { return groups[0] == .and([]) ? .all : groups[0] }
        return .or(groups)
    }

    struct Term {
        var text: String
        var position: Int
        var quoted: Bool
    }

    static func tokenize(_ text: String) throws -> [Term] {
        var terms: [Term] = []
        var current = ""
        var start = 0
        var quoteStart: Int?
        var quoted = false
        for (offset, character) in text.enumerated() {
            let position = offset + 1
            if character == "\"" {
                if quoteStart == nil {
                    quoteStart = position
                    quoted = true
                    if current.isEmpty { start = position }
                } else {
                    quoteStart = nil
                }
                continue
            }
            if quoteStart == nil, character.isWhitespace {
                if !current.isEmpty || quoted { terms.append(Term(text: current, position: start, quoted: quoted)) }
                current = ""
                quoted = false
                continue
            }
            if current.isEmpty && !quoted { start = position }
            current.append(character)
        }
        if let quoteStart { throw FilterParseError(position: quoteStart, message: "expected a closing quote") }
        if !current.isEmpty || quoted { terms.append(Term(text: current, position: start, quoted: quoted)) }
        return terms
    }

    static func parseTerm(_ term: Term) throws -> Filter {
        var text = Substring(term.text)
        var position = term.position
        var negated = false
        if text.hasPrefix("-"), text.count > 1 {
            negated = true
            text = text.dropFirst()
            position += 1
        }
        let filter: Filter
        if let colon = text.firstIndex(of: ":"), colon != text.startIndex {
            let name = String(text[..<colon])
            let value = String(text[text.index(after: colon)...])
            let valuePosition = position + name.count + 1
            filter = try fieldFilter(name, value, namePosition: position, valuePosition: valuePosition)
        } else {
            guard !text.isEmpty else { throw FilterParseError(position: position, message: "expected a word or field:value") }
            filter = .anyText(String(text))
        }
        return negated ? .not(filter) : filter
    }

    static func fieldFilter(_ name: String, _ value: String, namePosition: Int, valuePosition: Int) throws -> Filter {
        if let field = TextField(rawValue: name) {
            if value == "?" { return .missingText(field) }
            if value.hasPrefix("=") { return .text(field, .equals(String(value.dropFirst()))) }
            if value.hasPrefix("^") { return .text(field, .prefix(String(value.dropFirst()))) }
            guard !value.isEmpty else { throw FilterParseError(position: valuePosition, message: "expected a value after '\(name):'") }
            return .text(field, .contains(value))
        }
        if let field = NumberField(rawValue: name) {
            if value == "?" { return .missingNumber(field) }
            return try numberFilter(field, value, position: valuePosition)
        }
        if let field = FlagField(rawValue: name) {
            switch value.lowercased() {
            case "yes", "true", "1": return .flag(field, true)
            case "no", "false", "0": return .flag(field, false)
            default: throw FilterParseError(position: valuePosition, message: "expected yes or no after '\(name):'")
            }
        }
        let known = (TextField.allCases.map(\.rawValue) + NumberField.allCases.map(\.rawValue) + FlagField.allCases.map(\.rawValue)).joined(separator: ", ")
        throw FilterParseError(position: namePosition, message: "unknown field '\(name)'; expected one of \(known)")
    }

    /// A bound as written: a number, or a calendar day (UTC), which stands for all of its seconds.
    struct Bound {
        var first: Double
        var last: Double
    }

    /// The first second (UTC, since 1970) of a `YYYY-MM-DD` day of the Gregorian calendar, or nil when
    /// `text` is not one. Read by hand rather than by `DateFormatter`, which is built per bound and, for
    /// some malformed text, leaks 128 bytes a call (found by shelf-fuzz's smart-rule target).
    static func dayStart(_ text: Substring) -> Double? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 4, (1...2).contains(parts[1].utf8.count), (1...2).contains(parts[2].utf8.count),
            parts.allSatisfy({ $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
            let year = Int(parts[0]), year >= 1, let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month), day >= 1
        else { return nil }
        return InternetDate.days(year: year, month: month, day: day).map { Double($0) * 86_400 }
    }

    static func numberFilter(_ field: NumberField, _ value: String, position: Int) throws -> Filter {
        func bound(_ text: Substring, at offset: Int) throws -> Bound? {
            if text.isEmpty { return nil }
            // Below the largest double, so a strict bound's next value is a number too (shelf-fuzz:
            // `year:>1.7976931348623157e308` was +∞, which a smart playlist cannot store as JSON).
            if let value = Double(text), value.isFinite, value.magnitude < .greatestFiniteMagnitude { return Bound(first: value, last: value) }
            if let start = dayStart(text) {
                // Dates compare as whole seconds, so a day is its first second to its last.
                return Bound(first: start, last: start + 86_399)
            }
            throw FilterParseError(position: position + offset, message: "expected a number or a date (YYYY-MM-DD), found '\(text)'")
        }
        for (op, length) in [(">=", 2), ("<=", 2), (">", 1), ("<", 1)] where value.hasPrefix(op) {
            guard let bound = try bound(value.dropFirst(length), at: length) else {
                throw FilterParseError(position: position + length, message: "expected a number after '\(op)'")
            }
            switch op {
            case ">=": return .range(field, lower: bound.first, upper: nil)
            case "<=": return .range(field, lower: nil, upper: bound.last)
            // Strict bounds: the next representable value past the whole number or day.
            case ">": return .range(field, lower: bound.last.nextUp, upper: nil)
            default: return .range(field, lower: nil, upper: bound.first.nextDown)
            }
        }
        if let dots = value.range(of: "..") {
            let lower = try bound(value[..<dots.lowerBound], at: 0)
            let upperOffset = value.distance(from: value.startIndex, to: dots.upperBound)
            let upper = try bound(value[dots.upperBound...], at: upperOffset)
            if lower == nil && upper == nil { throw FilterParseError(position: position, message: "expected a number on at least one side of '..'") }
            if let lower, let upper, lower.first > upper.last {
                throw FilterParseError(position: position, message: "the range \(value) is empty: its start is after its end")
            }
            return .range(field, lower: lower?.first, upper: upper?.last)
        }
        guard let exact = try bound(Substring(value), at: 0) else {
            throw FilterParseError(position: position, message: "expected a number, a range A..B, or a comparison after ':'")
        }
        return .range(field, lower: exact.first, upper: exact.last)
    }
}

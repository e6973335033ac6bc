import Foundation

/// Dates as feeds, exports and people write them (RFC 822/2822, ISO 8601, a plain day), read by
/// Shelf itself. Foundation's `DateFormatter` traps when its parse stops inside a character that
/// a combining mark extends ("Mon, 01" followed by U+05BB: a hostile podcast feed stopped the
/// server; shelf-fuzz, podcast target), and it leaks for some malformed text (smart-rule target).
public enum InternetDate {
    /// Days from 1970-01-01 to a day of the proleptic Gregorian calendar; nil for a day that
    /// does not exist (30 February) or a year outside 1…9999.
    public static func days(year: Int, month: Int, day: Int) -> Int? {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1 else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthDays[month - 1] else { return nil }
        // Count days in 400-year cycles of a calendar whose years begin in March, so that the leap
        // day is the last day of its year and every month's offset follows one formula.
        let marchYear = month <= 2 ? year - 1 : year
        let cycle = marchYear / 400
        let yearOfCycle = marchYear - cycle * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfCycle = yearOfCycle * 365 + yearOfCycle / 4 - yearOfCycle / 100 + dayOfYear
        // 719,468 days lie between 0000-03-01 and 1970-01-01.
        return cycle * 146_097 + dayOfCycle - 719_468
    }

    /// Any of the forms below, the first that reads; nil for anything else.
    public static func parse(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return iso8601(text) ?? rfc822(text)
    }

    /// ISO 8601 as feeds and APIs write it: `2026-12-01`, `2026-12-01T08:56:01Z`, with a space for
    /// the T, without seconds, with a fraction of a second, and with a zone as `Z`, `+09:00`,
    /// `+0900` or `+09`. A time without a zone is UTC.
    public static func iso8601(_ text: String) -> Date? {
        var scanner = Scanner(text)
        guard let year = scanner.digits(exactly: 4), scanner.take("-"), let month = scanner.digits(exactly: 2), scanner.take("-"),
            let day = scanner.digits(exactly: 2), let days = days(year: year, month: month, day: day)
        else { return nil }
        var seconds = Double(days) * 86_400
        if scanner.atEnd { return Date(timeIntervalSince1970: seconds) }
        guard scanner.take("T") || scanner.take("t") || scanner.take(" "), let time = scanner.time() else { return nil }
        seconds += time
        if scanner.take(".") || scanner.take(",") {
            guard let fraction = scanner.fraction() else { return nil }
            seconds += fraction
        }
        if scanner.atEnd { return Date(timeIntervalSince1970: seconds) }
        guard let offset = scanner.numericZone(colonAllowed: true) ?? (scanner.take("Z") || scanner.take("z") ? 0 : nil), scanner.atEnd else {
            return nil
        }
        return Date(timeIntervalSince1970: seconds - Double(offset))
    }

    /// RFC 822/2822 as RSS writes it: `Tue, 01 Dec 2026 08:56:01 GMT`, the day's name optional,
    /// seconds optional, a two-digit year read as RFC 2822 says (below 50: 20xx), a comma allowed
    /// after the year (Last.fm's exports), and a zone as `+0900`, a name (`GMT`, `UT`, `UTC`,
    /// `EST`…) or none (UTC). A day alone (`01 Dec 2026`) is its midnight, UTC.
    public static func rfc822(_ text: String) -> Date? {
        var tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        // The day's name, with its comma or without, tells nothing the date does not.
        if let first = tokens.first, first.unicodeScalars.first?.properties.isAlphabetic == true, month(first) == nil {
            tokens.removeFirst()
        }
        guard tokens.count >= 3, tokens.count <= 5 else { return nil }
        var yearText = Substring(tokens[2])
        if yearText.hasSuffix(",") { yearText = yearText.dropLast() }
        guard let day = Int(exactDigits: tokens[0], upTo: 2), let month = month(tokens[1]),
            var year = Int(exactDigits: yearText, upTo: 4), yearText.count == 2 || yearText.count == 4
        else { return nil }
        if yearText.count == 2 { year += year < 50 ? 2000 : 1900 }
        guard let days = days(year: year, month: month, day: day) else { return nil }
        var seconds = Double(days) * 86_400
        if tokens.count >= 4 {
            var scanner = Scanner(tokens[3])
            guard let time = scanner.time(), scanner.atEnd else { return nil }
            seconds += time
        }
        if tokens.count == 5 {
            guard let offset = zone(tokens[4]) else { return nil }
            seconds -= Double(offset)
        }
        return Date(timeIntervalSince1970: seconds)
    }

    /// A month's number from its English name or its first three letters, any case.
    static func month(_ text: String) -> Int? {
        let names = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let full = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
        let lower = text.lowercased()
        if let index = names.firstIndex(of: lower) ?? full.firstIndex(of: lower) { return index + 1 }
        return lower == "sept" ? 9 : nil
    }

    /// A zone's offset from UTC in seconds: `+0900`, `-05:00`, `GMT+2`, or a name RFC 822 gives
    /// (or feeds use often).
    static func zone(_ text: String) -> Int? {
        let named: [String: Int] = [
            "GMT": 0, "UT": 0, "UTC": 0, "Z": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
            "BST": 1, "CET": 1, "CEST": 2, "EET": 2, "EEST": 3, "JST": 9, "KST": 9, "AEST": 10, "AEDT": 11,
        ]
        if let hours = named[text.uppercased()] { return hours * 3600 }
        var body = Substring(text)
        for prefix in ["GMT", "UTC", "UT"] where body.uppercased().hasPrefix(prefix) && body.count > prefix.count {
            body = body.dropFirst(prefix.count)
            break
        }
        var scanner = Scanner(String(body))
        guard let offset = scanner.numericZone(colonAllowed: true), scanner.atEnd else { return nil }
        return offset
    }

    /// A cursor over a text's ASCII bytes; anything else stops it.
    struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ text: String) { bytes = Array(text.utf8) }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Character) -> Bool {
            guard let ascii = character.asciiValue, index < bytes.count, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        /// Exactly `count` ASCII digits as a number.
        mutating func digits(exactly count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += count
            return value
        }

        /// One or two digits (an hour, a minute as some feeds write them).
        mutating func shortNumber() -> Int? {
            guard let first = digits(exactly: 1) else { return nil }
            guard let second = digits(exactly: 1) else { return first }
            return first * 10 + second
        }

        /// `HH:MM` or `HH:MM:SS` (a leap second's 60 allowed), in seconds into the day.
        mutating func time() -> Double? {
            guard let hour = shortNumber(), hour <= 23, take(":"), let minute = digits(exactly: 2), minute <= 59 else { return nil }
            var second = 0
            if take(":") {
                guard let value = digits(exactly: 2), value <= 60 else { return nil }
                second = value
            }
            return Double(hour * 3600 + minute * 60 + second)
        }

        /// The digits after a decimal point as a fraction (at most nine of them count).
        mutating func fraction() -> Double? {
            let start = index
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
            guard index > start else { return nil }
            let digits = bytes[start..<min(index, start + 9)]
            return Double(digits.reduce(0) { $0 * 10 + Int($1 - 48) }) / pow(10, Double(digits.count))
        }

        /// `+HHMM`, `-HH:MM` (when `colonAllowed`) or `+HH`, in seconds east of UTC, at most 14 hours.
        mutating func numericZone(colonAllowed: Bool) -> Int? {
            let start = index
            let sign: Int
            if take("+") {
                sign = 1
            } else if take("-") {
                sign = -1
            } else {
                return nil
            }
            guard let hours = digits(exactly: 2) else {
                index = start
                return nil
            }
            var minutes = 0
            if colonAllowed, take(":") {
                guard let value = digits(exactly: 2) else { return nil }
                minutes = value
            } else if let value = digits(exactly: 2) {
                minutes = value
            }
            guard hours <= 14, minutes <= 59 else { return nil }
            return sign * (hours * 3600 + minutes * 60)
        }
    }
}

extension Int {
    /// The number `text` writes in 1…`limit` ASCII digits, with nothing else; nil otherwise.
    fileprivate init?<S: StringProtocol>(exactDigits text: S, upTo limit: Int) {
        guard (1...limit).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(text) else { return nil }
        self = value
    }
}

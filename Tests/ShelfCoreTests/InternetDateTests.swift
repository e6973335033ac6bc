import Foundation
import ShelfCore
import Testing

/// Shelf's own reader of the dates feeds and exports write agrees with Foundation's formatters
/// wherever those read a date, and reads text that makes Foundation's `DateFormatter` trap.
@Suite struct InternetDateTests {
    /// Foundation's formatter for one pattern, in the POSIX locale, at UTC.
    static func formatter(_ pattern: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter
    }

    /// Every seventh day from 1900 to 2100 at an odd time, written in each form RSS, Atom and the
    /// exports use, with zones from −12:00 to +14:00: read as Foundation reads it.
    @Test func datesReadAsFoundationReadsThem() {
        let writers: [(pattern: String, zone: Bool)] = [
            ("EEE, dd MMM yyyy HH:mm:ss Z", true), ("EEE, d MMM yyyy HH:mm:ss 'GMT'", false), ("dd MMM yyyy HH:mm:ss Z", true),
            ("EEE, dd MMM yyyy HH:mm Z", true), ("EEE, dd MMM yyyy", false), ("yyyy-MM-dd", false), ("yyyy-MM-dd'T'HH:mm:ssXXXXX", true),
            ("yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX", true), ("dd MMM yyyy, HH:mm", false), ("yyyy-MM-dd HH:mm", false),
        ]
        let zones = [-12 * 3600, -5 * 3600, -3 * 3600 - 1800, 0, 3600, 5 * 3600 + 2700, 9 * 3600, 14 * 3600]
        var mismatches: [String] = []
        var read = 0
        let formatters = writers.map { Self.formatter($0.pattern) }
        for day in stride(from: -25_567, to: 47_482, by: 7) {
            let instant = Date(timeIntervalSince1970: Double(day) * 86_400 + Double(abs(day * 7_919) % 86_400) + 0.25)
            for (index, writer) in writers.enumerated() {
                let formatter = formatters[index]
                if writer.zone { formatter.timeZone = TimeZone(secondsFromGMT: zones[abs(day / 7 + index) % zones.count]) }
                let text = formatter.string(from: instant)
                let theirs = formatter.date(from: text)
                let ours = InternetDate.parse(text)
                read += 1
                if ours != theirs, mismatches.count < 8 { mismatches.append("\(text): \(String(describing: ours)) ≠ \(String(describing: theirs))") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(read > 100_000)
    }

    @Test func namedZonesTwoDigitYearsAndWhatIsNoDate() {
        func seconds(_ text: String) -> Double? { InternetDate.parse(text)?.timeIntervalSince1970 }
        let base = 1_796_115_361.0  // Tue, 01 Dec 2026 08:56:01 GMT
        #expect(seconds("Tue, 01 Dec 2026 08:56:01 GMT") == base)
        #expect(seconds("Tue, 01 Dec 2026 03:56:01 EST") == base)
        #expect(seconds("Tue, 1 Dec 26 00:56:01 PST") == base, "a two-digit year below 50 is 20xx")
        #expect(seconds("tuesday, 01 december 2026 09:56:01 +0100") == base)
        #expect(seconds("01 Dec 2026 17:56:01 GMT+9") == nil, "GMT+9 is not ±HH[MM]")
        #expect(seconds("01 Dec 2026 17:56:01 GMT+09") == base)
        #expect(seconds("2026-12-01T17:56:01+09:00") == base)
        #expect(seconds("2026-12-01T08:56:01.5Z") == base + 0.5)
        #expect(seconds("2026-12-01 08:56:01") == base)
        #expect(seconds("2026-12-01T08:56") == base - 1, "seconds may be left out")
        for text in [
            "", "Tue", "31 Feb 2026", "2026-02-30", "2026-13-01", "01 Dec 2026 24:00:00 GMT", "01 Dec 2026 08:56:01 XYZ", "2026-12-01T08:56:01+15:00",
            "Mon, 01\u{5BB}eg -026 tle>First", "31\u{301}Jan 2021 12:34", "2026-12-0\u{301}1", "١٢/١٢/٢٠٢٦",
        ] {
            #expect(InternetDate.parse(text) == nil, "\(text)")
        }
    }
}

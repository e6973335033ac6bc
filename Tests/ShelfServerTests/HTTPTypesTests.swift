import Foundation
import Testing

@testable import ShelfServer

@Suite struct HTTPTypesTests {
    @Test func targetsDecodeStrictly() throws {
        let parsed = try HTTPRequest.parseTarget("/api/search?q=%E5%AE%87+x&limit=5")
        #expect(parsed.path == "/api/search")
        #expect(parsed.query.map(\.value) == ["宇 x", "5"])
        #expect(throws: HTTPError.self) { try HTTPRequest.parseTarget("/a/%zz") }
        #expect(throws: HTTPError.self) { try HTTPRequest.parseTarget("/a/%00b") }
        #expect(throws: HTTPError.self) { try HTTPRequest.parseTarget("/a/%2e%2e/etc") }
        #expect(throws: HTTPError.self) { try HTTPRequest.parseTarget("/a?x=%ff") }
    }

    /// The stream's `Last-Modified` (and the `If-Range` it is compared with) is written without a
    /// formatter per response: it says what Foundation's RFC 1123 formatter says, at every day's
    /// first and last second from 1970 to 2100 and at the odd second between.
    @Test func httpDatesAreThoseOfTheRFC1123Format() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var mismatches: [String] = []
        for day in stride(from: 0, to: 47_847, by: 1) {
            for second in [0, 86_399, (day * 7_919) % 86_400] {
                let date = Date(timeIntervalSince1970: Double(day * 86_400 + second) + 0.75)
                let ours = StreamResponder.httpDate(date)
                let theirs = formatter.string(from: date)
                if ours != theirs, mismatches.count < 5 { mismatches.append("\(ours) ≠ \(theirs)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(StreamResponder.httpDate(Date(timeIntervalSince1970: 1_796_115_361)) == "Tue, 01 Dec 2026 08:56:01 GMT")
    }
}

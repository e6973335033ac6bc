import Foundation
import Testing

@testable import ShelfCore

@Suite struct FilterParserTests {
    @Test func parsesTheLanguage() throws {
        let filter = try FilterParser.parse(#"artist:beatles year:1965..1970 genre:=Rock -genre:Pop rating:>=80 "title:yellow sub""#)
        #expect(
            filter
                == .and([
                    .text(.artist, .contains("beatles")), .range(.year, lower: 1965, upper: 1970), .text(.genre, .equals("Rock")),
                    .not(.text(.genre, .contains("Pop"))), .range(.rating, lower: 80, upper: nil), .text(.title, .contains("yellow sub")),
                ]))
        #expect(try FilterParser.parse("") == .all)
        #expect(try FilterParser.parse("love") == .anyText("love"))
        #expect(try FilterParser.parse("a , b") == .or([.anyText("a"), .anyText("b")]))
        #expect(
            try FilterParser.parse("composer:? hasArtwork:no year:..1970")
                == .and([
                    .missingText(.composer), .flag(.hasArtwork, false), .range(.year, lower: nil, upper: 1970),
                ]))
        #expect(try FilterParser.parse("title:^The") == .text(.title, .prefix("The")))
    }

    @Test func aDateStandsForEverySecondOfItsDay() throws {
        let day = 1_704_067_200.0  // 2024-01-01T00:00:00Z
        #expect(try FilterParser.parse("dateAdded:2024-01-01") == .range(.dateAdded, lower: day, upper: day + 86_399))
        #expect(try FilterParser.parse("dateAdded:2024-01-01..2024-01-02") == .range(.dateAdded, lower: day, upper: day + 2 * 86_400 - 1))
        #expect(try FilterParser.parse("dateAdded:<=2024-01-01") == .range(.dateAdded, lower: nil, upper: day + 86_399))
        #expect(try FilterParser.parse("dateAdded:>2024-01-01") == .range(.dateAdded, lower: (day + 86_399).nextUp, upper: nil))
        // A track added in the afternoon of that day matches it; one at midnight after does not.
        let afternoon = Track(path: "/a.flac", dateAdded: Date(timeIntervalSince1970: day + 50_000.75))
        let next = Track(path: "/b.flac", dateAdded: Date(timeIntervalSince1970: day + 86_400))
        let filter = try FilterParser.parse("dateAdded:2024-01-01")
        #expect(filter.matches(afternoon) && !filter.matches(next))
        #expect(NumberField.dateAdded.value(of: afternoon) == day + 50_000)
    }

    @Test func errorsNameThePositionAndWhatWasExpected() {
        func error(_ text: String) -> FilterParseError? {
            do { _ = try FilterParser.parse(text) } catch let error as FilterParseError { return error } catch {}
            return nil
        }
        #expect(error("year:19x0")?.position == 6)
        #expect(error("color:red")?.position == 1)
        #expect(error("color:red")?.message.contains("unknown field") == true)
        #expect(error("a \"open")?.position == 3)
        #expect(error("year:1970..1960")?.message.contains("empty") == true)
        #expect(error("artist:")?.message.contains("expected a value") == true)
        #expect(error("hasArtwork:maybe")?.message.contains("yes or no") == true)
        #expect(error(", a")?.position == 1)
    }

    @Test func filtersMatchFoldedText() {
        let track = Track(path: "/a.flac", title: "Crazy in Love", artist: "Beyoncé", genre: "R&B", year: 2003, rating: 80)
        #expect(Filter.text(.artist, .contains("beyonce")).matches(track))
        #expect(Filter.text(.artist, .equals("BEYONCE")).matches(track))
        #expect(Filter.anyText("love").matches(track))
        #expect(!Filter.text(.composer, .contains("x")).matches(track))
        #expect(Filter.not(.text(.composer, .contains("x"))).matches(track))
        #expect(Filter.missingText(.composer).matches(track))
        #expect(Filter.range(.year, lower: 2000, upper: nil).matches(track))
        #expect(!Filter.range(.lastPlayed, lower: nil, upper: nil).matches(track))
        #expect(Filter.text(.path, .prefix("/a")).matches(track))
    }
}

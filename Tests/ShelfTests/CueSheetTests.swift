import Foundation
import XCTest

@testable import Shelf

final class CueSheetTests: XCTestCase {
    // MARK: - Helpers

    /// The sheet's lines joined with `ending`, as UTF-8 (or `encoding`), with a last line end.
    private func sheet(_ lines: [String], ending: String = "\r\n", encoding: CueEncoding = .utf8) -> Data {
        let text = lines.joined(separator: ending) + ending
        guard let data = encoding.encode(text) else {
            XCTFail("test sheet cannot be encoded in \(encoding)")
            return Data()
        }
        return encoding == .utf8BOM ? Data([0xEF, 0xBB, 0xBF]) + data : data
    }

    private func parse(_ data: Data, name: String = "album.cue") throws -> CueSheet {
        try CueSheet.parse(data, name: name)
    }

    /// The parse error for `lines`, or a failure when the sheet parses.
    private func parseError(_ lines: [String], file: StaticString = #filePath, line: UInt = #line) -> CueSheetError? {
        do {
            _ = try CueSheet.parse(sheet(lines), name: "album.cue")
            XCTFail("sheet parsed", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// The byte lines of `data` with their line ends, to compare sheets line by line.
    private func byteLines(_ data: Data) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        for byte in data {
            current.append(byte)
            if byte == 0x0A {
                lines.append(current)
                current = []
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    private func assertSeconds(_ value: Double?, _ expected: Double, file: StaticString = #filePath, line: UInt = #line) {
        guard let value else { return XCTFail("no time", file: file, line: line) }
        XCTAssertEqual(value, expected, accuracy: 1e-9, file: file, line: line)
    }

    private let eacSheet = [
        "REM GENRE \"Alternative Rock\"",
        "REM DATE 1994",
        "REM DISCID 8A0A9E0B",
        "REM COMMENT \"ExactAudioCopy v1.6\"",
        "REM DISCNUMBER 2",
        "REM TOTALDISCS 3",
        "CATALOG 0724382968829",
        "PERFORMER \"The Band\"",
        "TITLE \"Live at the Hall\"",
        "SONGWRITER \"Writers\"",
        "FILE \"The Band - Live at the Hall.flac\" WAVE",
        "  TRACK 01 AUDIO",
        "    TITLE \"Intro\"",
        "    PERFORMER \"The Band\"",
        "    ISRC USABC9400001",
        "    INDEX 01 00:00:00",
        "  TRACK 02 AUDIO",
        "    TITLE \"Second Song\"",
        "    PERFORMER \"Guest Singer\"",
        "    SONGWRITER \"Someone Else\"",
        "    FLAGS DCP",
        "    INDEX 00 03:58:40",
        "    INDEX 01 04:00:00",
        "  TRACK 03 AUDIO",
        "    TITLE \"Third\"",
        "    INDEX 01 07:30:12",
    ]

    // MARK: - Parsing

    func testParsesUTF8Sheet() throws {
        let cue = try parse(sheet(eacSheet))
        XCTAssertEqual(cue.encoding, .utf8)
        XCTAssertEqual(cue.name, "album.cue")
        XCTAssertEqual(cue.title, "Live at the Hall")
        XCTAssertEqual(cue.performer, "The Band")
        XCTAssertEqual(cue.songwriter, "Writers")
        XCTAssertEqual(cue.genre, "Alternative Rock")
        XCTAssertEqual(cue.date, "1994")
        XCTAssertEqual(cue.comment, "ExactAudioCopy v1.6")
        XCTAssertEqual(cue.catalog, "0724382968829")
        XCTAssertEqual(cue.discNumber, 2)
        XCTAssertEqual(cue.discCount, 3)
        XCTAssertEqual(cue.files, ["The Band - Live at the Hall.flac"])
        XCTAssertEqual(cue.tracks.map(\.number), [1, 2, 3])
        XCTAssertEqual(cue.tracks.map(\.title), ["Intro", "Second Song", "Third"])
        XCTAssertEqual(cue.tracks.map(\.performer), ["The Band", "Guest Singer", nil])
        XCTAssertEqual(cue.tracks.map(\.songwriter), [nil, "Someone Else", nil])
        XCTAssertEqual(cue.tracks[0].isrc, "USABC9400001")
        XCTAssertEqual(cue.tracks.map(\.file), Array(repeating: "The Band - Live at the Hall.flac", count: 3))
        XCTAssertNil(cue.tracks[0].pregap)
        assertSeconds(cue.tracks[1].pregap, 238 + 40.0 / 75)
        assertSeconds(cue.tracks[1].start, 240)
        assertSeconds(cue.tracks[2].start, 450 + 12.0 / 75)
    }

    func testParsesUTF8SheetWithByteOrderMark() throws {
        let data = sheet(["REM GENRE Électronique", "TITLE \"Ünïcødé ✓\"", "FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00"],
                         ending: "\n", encoding: .utf8BOM)
        XCTAssertEqual(Array(data.prefix(3)), [0xEF, 0xBB, 0xBF])
        let cue = try parse(data)
        XCTAssertEqual(cue.encoding, .utf8BOM)
        // The mark must not hide the first line's command.
        XCTAssertEqual(cue.genre, "Électronique")
        XCTAssertEqual(cue.title, "Ünïcødé ✓")
    }

    func testParsesShiftJISSheet() throws {
        let data = sheet([
            "PERFORMER \"山田太郎\"", "TITLE \"夏の終わり～ﾗｲﾌﾞ\"", "FILE \"山田太郎 - 夏の終わり.wav\" WAVE",
            "  TRACK 01 AUDIO", "    TITLE \"はじまり\"", "    INDEX 01 00:00:00",
            "  TRACK 02 AUDIO", "    TITLE \"①番目の歌\"", "    INDEX 01 03:00:00",
        ], encoding: .shiftJIS)
        // 山 is 0x8E 0x52 in Shift-JIS: the bytes really are Shift-JIS, not UTF-8.
        XCTAssertEqual(Array(data.prefix(13)), Array("PERFORMER \"".utf8) + [0x8E, 0x52])
        XCTAssertNil(String(data: data, encoding: .utf8))
        let cue = try parse(data)
        XCTAssertEqual(cue.encoding, .shiftJIS)
        XCTAssertEqual(cue.performer, "山田太郎")
        XCTAssertEqual(cue.title, "夏の終わり～ﾗｲﾌﾞ")
        XCTAssertEqual(cue.files, ["山田太郎 - 夏の終わり.wav"])
        XCTAssertEqual(cue.tracks.map(\.title), ["はじまり", "①番目の歌"])
    }

    func testParsesWindows1252Sheet() throws {
        let data = sheet([
            "PERFORMER \"Mötley Crüe\"", "TITLE \"Café Society\"", "FILE \"Café.wav\" WAVE",
            "  TRACK 01 AUDIO", "    TITLE \"Naïve – “Quoted”\"", "    INDEX 01 00:00:00",
        ], encoding: .windows1252)
        XCTAssertTrue(data.contains(0xE9), "é is byte 0xE9")
        XCTAssertTrue(data.contains(0xF6), "ö is byte 0xF6")
        let cue = try parse(data)
        XCTAssertEqual(cue.encoding, .windows1252)
        XCTAssertEqual(cue.performer, "Mötley Crüe")
        XCTAssertEqual(cue.title, "Café Society")
        XCTAssertEqual(cue.files, ["Café.wav"])
        XCTAssertEqual(cue.tracks[0].title, "Naïve – “Quoted”")
    }

    func testDetectsEncodings() {
        XCTAssertEqual(CueEncoding.detect(Data("TITLE \"plain\"".utf8)), .utf8)
        XCTAssertEqual(CueEncoding.detect(Data([0xEF, 0xBB, 0xBF]) + Data("TITLE x".utf8)), .utf8BOM)
        XCTAssertEqual(CueEncoding.detect(Data([0x43, 0x61, 0x66, 0xE9])), .windows1252)
        // Half-width kana alone (0xB1) is also Latin-1 text; without a double-byte pair it is not taken for Shift-JIS.
        XCTAssertEqual(CueEncoding.detect(Data([0x41, 0xB1, 0x42])), .windows1252)
        XCTAssertEqual(CueEncoding.detect(Data([0x93, 0xFA, 0x96, 0x7B])), .shiftJIS)
        // A lead byte without a trail byte is not Shift-JIS.
        XCTAssertEqual(CueEncoding.detect(Data([0x93, 0xFA, 0x96])), .windows1252)
        // Bytes Windows-1252 leaves undefined still read, and write back as themselves.
        XCTAssertEqual(CueEncoding.windows1252.decode(Data([0x41, 0x81, 0x80])), "A\u{81}€")
        XCTAssertEqual(CueEncoding.windows1252.encode("A\u{81}€"), Data([0x41, 0x81, 0x80]))
    }

    func testToleratesSyntaxVariants() throws {
        let lines = [
            "", "rem genre Jazz", "rem some other remark", "   ", "performer Solo Artist",
            "\tFile Some Name.flac WAVE", "CDTEXTFILE \"x.cdt\"", "\ttrack 1 audio", "\t\ttitle Unquoted Words Here",
            "\t\tpregap 00:02:00", "\t\tindex 1 0:0:0", "\tTRACK 02 AUDIO", "\t\tTITLE \"Unclosed quote",
            "\t\tPERFORMER \"Quoted\" trailing words", "\t\tINDEX 01 100:00:00",
        ]
        for ending in ["\r\n", "\n", "\r"] {
            let cue = try parse(sheet(lines, ending: ending))
            XCTAssertEqual(cue.genre, "Jazz")
            XCTAssertEqual(cue.performer, "Solo Artist")
            XCTAssertEqual(cue.files, ["Some Name.flac"])
            XCTAssertEqual(cue.tracks.map(\.title), ["Unquoted Words Here", "Unclosed quote"])
            XCTAssertEqual(cue.tracks[1].performer, "Quoted")
            assertSeconds(cue.tracks[1].start, 6000)
        }
        // No final line end, and no type on the FILE line.
        let bare = Data("FILE a.wav\nTRACK 01 AUDIO\nINDEX 01 00:00:00".utf8)
        let cue = try parse(bare)
        XCTAssertEqual(cue.files, ["a.wav"])
        XCTAssertEqual(cue.tracks.count, 1)
    }

    func testFramesArithmetic() throws {
        let cue = try parse(sheet([
            "FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 01:02:37",
            "TRACK 02 AUDIO", "INDEX 01 120:00:74", "TRACK 03 AUDIO", "INDEX 01 120:59:00",
        ]))
        assertSeconds(cue.tracks[0].start, 62.493_333_333_333_33)
        assertSeconds(cue.tracks[1].start, 7200 + 74.0 / 75)
        assertSeconds(cue.tracks[2].start, 7259)
    }

    func testSkipsDataTracks() throws {
        let cue = try parse(sheet([
            "FILE \"audio.wav\" WAVE", "TRACK 01 AUDIO", "TITLE \"One\"", "INDEX 01 00:00:00",
            "FILE \"data.bin\" BINARY", "TRACK 02 MODE1/2352", "TITLE \"Data\"", "INDEX 01 00:00:00",
        ]))
        XCTAssertEqual(cue.files, ["audio.wav", "data.bin"])
        XCTAssertEqual(cue.tracks.map(\.number), [1])
        XCTAssertEqual(cue.slices(fileDurations: [:]).map(\.file), ["audio.wav"])
    }

    // MARK: - Slices

    func testSlicesKeepPregapsInThePreviousTrack() throws {
        let cue = try parse(sheet(eacSheet))
        let slices = cue.slices(fileDurations: ["The Band - Live at the Hall.flac": 600])
        XCTAssertEqual(slices.map(\.number), [1, 2, 3])
        XCTAssertEqual(slices.map(\.start), [0, 240, 450 + 12.0 / 75])
        // Track 2's INDEX 00 (03:58:40) stays within track 1, as a CD player plays it.
        XCTAssertEqual(slices.map(\.end), [240, 450 + 12.0 / 75, 600])
        XCTAssertEqual(slices.map { $0.track?.number }, [1, 2, 3])
        XCTAssertNil(cue.slices(fileDurations: [:]).last?.end)
    }

    func testHiddenFirstTrack() throws {
        let withPregap = try parse(sheet([
            "FILE \"a.flac\" WAVE", "TRACK 01 AUDIO", "INDEX 00 00:00:00", "INDEX 01 00:32:10", "TRACK 02 AUDIO", "INDEX 01 04:00:00",
        ]))
        assertSeconds(withPregap.tracks[0].pregap, 0)
        let slices = withPregap.slices(fileDurations: [:])
        XCTAssertEqual(slices.map(\.number), [0, 1, 2])
        XCTAssertNil(slices[0].track)
        XCTAssertEqual(slices[0].start, 0)
        assertSeconds(slices[0].end, 32 + 10.0 / 75)
        assertSeconds(slices[1].start, 32 + 10.0 / 75)

        let withoutPregap = try parse(sheet(["FILE \"a.flac\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:05:00"]))
        XCTAssertEqual(withoutPregap.slices(fileDurations: [:]).map(\.number), [0, 1])

        // A second or less before track 1 is lead-in slack, not a track.
        let short = try parse(sheet(["FILE \"a.flac\" WAVE", "TRACK 01 AUDIO", "INDEX 00 00:00:00", "INDEX 01 00:01:00"]))
        XCTAssertEqual(short.slices(fileDurations: [:]).map(\.number), [1])
    }

    func testTwoFileSheet() throws {
        let cue = try parse(sheet([
            "TITLE \"Double\"",
            "FILE \"CD1.flac\" WAVE", "  TRACK 01 AUDIO", "    INDEX 01 00:00:00", "  TRACK 02 AUDIO", "    INDEX 01 03:00:00",
            "FILE \"CD2.flac\" WAVE", "  TRACK 03 AUDIO", "    INDEX 01 00:00:00", "  TRACK 04 AUDIO",
            "    INDEX 00 02:58:00", "    INDEX 01 03:00:00",
        ]))
        XCTAssertEqual(cue.files, ["CD1.flac", "CD2.flac"])
        XCTAssertEqual(cue.tracks.map(\.file), ["CD1.flac", "CD1.flac", "CD2.flac", "CD2.flac"])
        let slices = cue.slices(fileDurations: ["CD1.flac": 400])
        XCTAssertEqual(slices.map(\.number), [1, 2, 3, 4])
        XCTAssertEqual(slices.map(\.file), ["CD1.flac", "CD1.flac", "CD2.flac", "CD2.flac"])
        XCTAssertEqual(slices.map(\.start), [0, 180, 0, 180])
        XCTAssertEqual(slices.map(\.end), [180, 400, 180, nil])
    }

    func testPregapInThePreviousFile() throws {
        // Gaps saved at the end of the previous track's file: track 2's INDEX 00 is in 01.wav, its INDEX 01 in 02.wav.
        let cue = try parse(sheet([
            "FILE \"01.wav\" WAVE", "  TRACK 01 AUDIO", "    TITLE \"One\"", "    INDEX 01 00:00:00",
            "  TRACK 02 AUDIO", "    TITLE \"Two\"", "    INDEX 00 04:10:50",
            "FILE \"02.wav\" WAVE", "    INDEX 01 00:00:00",
        ]))
        XCTAssertEqual(cue.tracks.map(\.file), ["01.wav", "02.wav"])
        XCTAssertNil(cue.tracks[1].pregap)
        XCTAssertEqual(cue.tracks[1].title, "Two")
        let slices = cue.slices(fileDurations: ["01.wav": 252, "02.wav": 200])
        XCTAssertEqual(slices.map(\.file), ["01.wav", "02.wav"])
        XCTAssertEqual(slices.map(\.start), [0, 0])
        XCTAssertEqual(slices.map(\.end), [252, 200])
    }

    // MARK: - Errors

    func testErrors() throws {
        let noFile = parseError(["TITLE \"x\"", "REM DATE 2000"])
        XCTAssertEqual(noFile?.line, nil)
        XCTAssertEqual(noFile?.description, "album.cue: has no FILE line")

        XCTAssertEqual(parseError(["FILE \"a.wav\" WAVE"])?.description, "album.cue: has no audio TRACK")
        XCTAssertEqual(parseError(["FILE \"a.bin\" BINARY", "TRACK 01 MODE1/2352", "INDEX 01 00:00:00"])?.reason, "has no audio TRACK")

        let early = parseError(["TITLE \"x\"", "TRACK 01 AUDIO", "INDEX 01 00:00:00", "FILE \"a.wav\" WAVE"])
        XCTAssertEqual(early?.line, 2)
        XCTAssertEqual(early?.description, "album.cue: line 2: TRACK 01 comes before any FILE")

        let noStart = parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 00 00:00:00", "TRACK 02 AUDIO", "INDEX 01 01:00:00"])
        XCTAssertEqual(noStart?.description, "album.cue: line 2: TRACK 01 has no INDEX 01")
        XCTAssertEqual(parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "TITLE \"x\""])?.line, 2)

        for time in ["1:2", "00:60:00", "00:00:75", "aa:bb:cc", "00:00:00:00", "-1:00:00", "00::00", ""] {
            let error = parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 \(time)"])
            XCTAssertEqual(error?.line, 3, time)
            let description = error?.description ?? ""
            XCTAssertTrue(description.hasPrefix("album.cue: line 3: INDEX 01 is not mm:ss:ff"), "\(time): \(description)")
        }
        XCTAssertEqual(parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 00 0:61:00", "INDEX 01 00:00:00"])?.line, 3)

        let backwards = parseError([
            "FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00", "TRACK 02 AUDIO", "INDEX 01 05:00:00",
            "TRACK 03 AUDIO", "INDEX 01 04:59:74",
        ])
        XCTAssertEqual(backwards?.line, 7)
        XCTAssertEqual(backwards?.reason, "TRACK 03 starts at 04:59:74, not after TRACK 02 at 05:00:00 in \"a.wav\"")
        // Starting over in another file is not going backwards.
        XCTAssertNoThrow(try parse(sheet([
            "FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00", "TRACK 02 AUDIO", "INDEX 01 05:00:00",
            "FILE \"b.wav\" WAVE", "TRACK 03 AUDIO", "INDEX 01 00:00:00",
        ])))

        let twice = parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00", "TRACK 01 AUDIO", "INDEX 01 01:00:00"])
        XCTAssertEqual(twice?.line, 4)
        XCTAssertEqual(parseError(["FILE \"a.wav\" WAVE", "TRACK AUDIO", "INDEX 01 00:00:00"])?.line, 2)

        var large = sheet(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00"])
        large.append(Data(repeating: 0x20, count: CueSheet.maxBytes))
        XCTAssertThrowsError(try parse(large)) { error in
            XCTAssertEqual((error as? CueSheetError)?.line, nil)
            XCTAssertTrue((error as? CueSheetError)?.description.hasPrefix("album.cue: is ") == true)
        }
        XCTAssertNoThrow(try parse(sheet(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00"])))

        XCTAssertThrowsError(try parse(Data([0xFF, 0xFE, 0x46, 0x00])))
    }

    // MARK: - Rewriting

    func testRewriteReplacesInsertsAndRemovesOnlyThatTracksLines() throws {
        let original = sheet(eacSheet)
        let cue = try parse(original)
        let output = try cue.rewritten(
            original: original, track: 2, title: "New 'Title'",
            performer: nil, songwriter: "Someone Else", isrc: "GBXYZ9400002")
        var expected = byteLines(original)
        expected[17] = Array("    TITLE \"New 'Title'\"\r\n".utf8)
        expected.remove(at: 18)  // PERFORMER
        expected.insert(Array("    ISRC \"GBXYZ9400002\"\r\n".utf8), at: 17)
        XCTAssertEqual(byteLines(output), expected)

        let again = try parse(output)
        XCTAssertEqual(again.tracks[1].title, "New 'Title'")
        XCTAssertNil(again.tracks[1].performer)
        XCTAssertEqual(again.tracks[1].songwriter, "Someone Else")
        XCTAssertEqual(again.tracks[1].isrc, "GBXYZ9400002")
        XCTAssertEqual(again.tracks.map(\.start), cue.tracks.map(\.start))
        XCTAssertEqual(again.tracks[0], cue.tracks[0])
        XCTAssertEqual(again.tracks[2], cue.tracks[2])

        // Writing the values the sheet already has changes nothing, unquoted ISRC included.
        let same = try cue.rewritten(
            original: original, track: 1, title: "Intro", performer: "The Band", songwriter: nil, isrc: "USABC9400001")
        XCTAssertEqual(same, original)
    }

    func testRewriteInsertsWithTheTracksIndentAndLineEnds() throws {
        let original = sheet(["FILE \"a.wav\" WAVE", "\tTRACK 01 AUDIO", "\t\tINDEX 01 00:00:00"], ending: "\r")
        let cue = try parse(original)
        let output = try cue.rewritten(original: original, track: 1, title: "T", performer: "P", songwriter: nil, isrc: nil)
        XCTAssertEqual(
            String(decoding: output, as: UTF8.self),
            "FILE \"a.wav\" WAVE\r\tTRACK 01 AUDIO\r\t\tTITLE \"T\"\r\t\tPERFORMER \"P\"\r\t\tINDEX 01 00:00:00\r")
        // The keyword keeps its spelling when its value changes.
        let lower = Data("file a.wav wave\ntrack 01 audio\n  title old\n  index 01 00:00:00".utf8)
        let rewritten = try parse(lower).rewritten(original: lower, track: 1, title: "new", performer: nil, songwriter: nil, isrc: nil)
        XCTAssertEqual(String(decoding: rewritten, as: UTF8.self), "file a.wav wave\ntrack 01 audio\n  title \"new\"\n  index 01 00:00:00")
    }

    func testRewriteKeepsTheByteOrderMark() throws {
        let original = sheet(["TITLE \"Album\"", "FILE \"a.wav\" WAVE", "  TRACK 01 AUDIO", "    TITLE \"Old\"", "    INDEX 01 00:00:00"],
                             ending: "\n", encoding: .utf8BOM)
        let cue = try parse(original)
        let output = try cue.rewritten(original: original, track: 1, title: "Nouveau ✓", performer: nil, songwriter: nil, isrc: nil)
        XCTAssertEqual(Array(output.prefix(3)), [0xEF, 0xBB, 0xBF])
        var expected = byteLines(original)
        expected[3] = Array("    TITLE \"Nouveau ✓\"\n".utf8)
        XCTAssertEqual(byteLines(output), expected)
        XCTAssertEqual(try parse(output).tracks[0].title, "Nouveau ✓")
        XCTAssertEqual(try parse(output).encoding, .utf8BOM)
    }

    func testRewriteInShiftJIS() throws {
        let original = sheet([
            "TITLE \"夏の終わり\"", "FILE \"夏.wav\" WAVE", "  TRACK 01 AUDIO", "    TITLE \"はじまり\"", "    INDEX 01 00:00:00",
            "  TRACK 02 AUDIO", "    TITLE \"二曲目\"", "    INDEX 01 03:00:00",
        ], encoding: .shiftJIS)
        let cue = try parse(original)
        XCTAssertEqual(cue.encoding, .shiftJIS)
        // 〜 (WAVE DASH), as Macs type it, is written as CP932's ～ at the same code.
        let output = try cue.rewritten(original: original, track: 2, title: "新しい題名〜ﾗｲﾌﾞ", performer: "歌手", songwriter: nil, isrc: nil)
        var expected = byteLines(original)
        expected[6] = [UInt8](try XCTUnwrap(CueEncoding.shiftJIS.encode("    TITLE \"新しい題名～ﾗｲﾌﾞ\"\r\n")))
        expected.insert([UInt8](try XCTUnwrap(CueEncoding.shiftJIS.encode("    PERFORMER \"歌手\"\r\n"))), at: 6)
        XCTAssertEqual(byteLines(output), expected)
        let again = try parse(output)
        XCTAssertEqual(again.encoding, .shiftJIS)
        XCTAssertEqual(again.tracks[1].title, "新しい題名～ﾗｲﾌﾞ")
        XCTAssertEqual(again.tracks[1].performer, "歌手")

        XCTAssertThrowsError(try cue.rewritten(original: original, track: 1, title: "Café", performer: nil, songwriter: nil, isrc: nil)) {
            let description = String(describing: $0)
            XCTAssertTrue(description.contains("\"Café\"") && description.contains("Shift-JIS"), description)
        }
    }

    func testRewriteInWindows1252() throws {
        let original = sheet(["PERFORMER \"Mötley Crüe\"", "FILE \"Café.wav\" WAVE", "  TRACK 01 AUDIO", "    INDEX 01 00:00:00"],
                             encoding: .windows1252)
        let cue = try parse(original)
        let output = try cue.rewritten(original: original, track: 1, title: "Café del Mar", performer: nil, songwriter: nil, isrc: nil)
        var expected = byteLines(original)
        expected.insert(Array("    TITLE \"Caf".utf8) + [0xE9] + Array(" del Mar\"\r\n".utf8), at: 3)
        XCTAssertEqual(byteLines(output), expected)
        XCTAssertEqual(try parse(output).tracks[0].title, "Café del Mar")
        // A decomposed é (e + U+0301) is composed before it is written.
        let decomposed = try cue.rewritten(original: original, track: 1, title: "Cafe\u{301}", performer: nil, songwriter: nil, isrc: nil)
        XCTAssertEqual(try parse(decomposed).tracks[0].title, "Café")

        XCTAssertThrowsError(try cue.rewritten(original: original, track: 1, title: "日本", performer: nil, songwriter: nil, isrc: nil)) {
            let error = $0 as? CueSheetError
            XCTAssertEqual(error?.reason, "TITLE of TRACK 01 \"日本\" cannot be written in the sheet's encoding, Windows-1252")
        }
    }

    func testRewriteRefusesWhatASheetCannotHold() throws {
        let original = sheet(eacSheet)
        let cue = try parse(original)
        let quoted = "a \"b\""
        XCTAssertThrowsError(try cue.rewritten(original: original, track: 1, title: quoted, performer: nil, songwriter: nil, isrc: nil)) {
            XCTAssertTrue(String(describing: $0).contains("double quote"), String(describing: $0))
        }
        XCTAssertThrowsError(try cue.rewritten(original: original, track: 1, title: nil, performer: "a\nb", songwriter: nil, isrc: nil)) {
            XCTAssertTrue(String(describing: $0).contains("line break"), String(describing: $0))
        }
        XCTAssertThrowsError(try cue.rewritten(original: original, track: 9, title: "x", performer: nil, songwriter: nil, isrc: nil)) {
            XCTAssertEqual(String(describing: $0), "album.cue: has no audio TRACK 9")
        }
    }
}

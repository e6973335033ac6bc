import Foundation
import Testing

@testable import Shelf

@Suite struct CueSheetTests {
    // MARK: - Helpers

    /// The sheet's lines joined with `ending`, as UTF-8 (or `encoding`), with a last line end.
    private func sheet(_ lines: [String], ending: String = "\r\n", encoding: TextEncoding = .utf8) -> Data {
        let text = lines.joined(separator: ending) + ending
        guard let data = encoding.encode(text) else {
            Issue.record("test sheet cannot be encoded in \(encoding)")
            return Data()
        }
        return encoding == .utf8BOM ? Data([0xEF, 0xBB, 0xBF]) + data : data
    }

    private func parse(_ data: Data, name: String = "album.cue") throws -> CueSheet {
        try CueSheet.parse(data, name: name)
    }

    /// The parse error for `lines`, or a failure when the sheet parses.
    private func parseError(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) -> CueSheetError? {
        do {
            _ = try CueSheet.parse(sheet(lines), name: "album.cue")
            Issue.record("sheet parsed", sourceLocation: sourceLocation)
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

    private func expectSeconds(_ value: Double?, _ expected: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let value else {
            Issue.record("no time", sourceLocation: sourceLocation)
            return
        }
        #expect(abs(value - expected) <= 1e-9, sourceLocation: sourceLocation)
    }

    let eacSheet = [
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

    @Test func parsesAUTF8Sheet() throws {
        let cue = try parse(sheet(eacSheet))
        #expect(cue.encoding == .utf8)
        #expect(cue.name == "album.cue")
        #expect(cue.title == "Live at the Hall")
        #expect(cue.performer == "The Band")
        #expect(cue.songwriter == "Writers")
        #expect(cue.genre == "Alternative Rock")
        #expect(cue.date == "1994")
        #expect(cue.comment == "ExactAudioCopy v1.6")
        #expect(cue.catalog == "0724382968829")
        #expect(cue.discNumber == 2)
        #expect(cue.discCount == 3)
        #expect(cue.files == ["The Band - Live at the Hall.flac"])
        #expect(cue.tracks.map(\.number) == [1, 2, 3])
        #expect(cue.tracks.map(\.title) == ["Intro", "Second Song", "Third"])
        #expect(cue.tracks.map(\.performer) == ["The Band", "Guest Singer", nil])
        #expect(cue.tracks.map(\.songwriter) == [nil, "Someone Else", nil])
        #expect(cue.tracks[0].isrc == "USABC9400001")
        #expect(cue.tracks.map(\.file) == Array(repeating: "The Band - Live at the Hall.flac", count: 3))
        #expect(cue.tracks[0].pregap == nil)
        expectSeconds(cue.tracks[1].pregap, 238 + 40.0 / 75)
        expectSeconds(cue.tracks[1].start, 240)
        expectSeconds(cue.tracks[2].start, 450 + 12.0 / 75)
    }

    @Test func parsesAUTF8SheetWithAByteOrderMark() throws {
        let data = sheet(
            ["REM GENRE Électronique", "TITLE \"Ünïcødé ✓\"", "FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00"],
            ending: "\n", encoding: .utf8BOM)
        #expect(Array(data.prefix(3)) == [0xEF, 0xBB, 0xBF])
        let cue = try parse(data)
        #expect(cue.encoding == .utf8BOM)
        // The mark must not hide the first line's command.
        #expect(cue.genre == "Électronique")
        #expect(cue.title == "Ünïcødé ✓")
    }

    @Test func parsesAShiftJISSheet() throws {
        let data = sheet(
            [
                "PERFORMER \"山田太郎\"", "TITLE \"夏の終わり～ﾗｲﾌﾞ\"", "FILE \"山田太郎 - 夏の終わり.wav\" WAVE",
                "  TRACK 01 AUDIO", "    TITLE \"はじまり\"", "    INDEX 01 00:00:00",
                "  TRACK 02 AUDIO", "    TITLE \"①番目の歌\"", "    INDEX 01 03:00:00",
            ], encoding: .shiftJIS)
        // 山 is 0x8E 0x52 in Shift-JIS: the bytes really are Shift-JIS, not UTF-8.
        let expectedPrefix: [UInt8] = Array("PERFORMER \"".utf8) + [0x8E, 0x52]
        #expect(Array(data.prefix(13)) == expectedPrefix)
        #expect(String(data: data, encoding: .utf8) == nil)
        let cue = try parse(data)
        #expect(cue.encoding == .shiftJIS)
        #expect(cue.performer == "山田太郎")
        #expect(cue.title == "夏の終わり～ﾗｲﾌﾞ")
        #expect(cue.files == ["山田太郎 - 夏の終わり.wav"])
        #expect(cue.tracks.map(\.title) == ["はじまり", "①番目の歌"])
    }

    /// A sheet Notepad saved as "Unicode" (UTF-16LE with its mark) is read, and a rewrite keeps it
    /// UTF-16 with the mark; big-endian too.
    @Test(arguments: [TextEncoding.utf16LE, .utf16BE])
    func readsAndRewritesAUTF16Sheet(_ encoding: TextEncoding) throws {
        let text = ["PERFORMER \"山田太郎\"", "FILE \"a.wav\" WAVE", "  TRACK 01 AUDIO", "    TITLE \"はじまり\"", "    INDEX 01 00:00:00"]
        let mark: [UInt8] = encoding == .utf16LE ? [0xFF, 0xFE] : [0xFE, 0xFF]
        let data = Data(mark) + sheet(text, encoding: encoding)
        let cue = try parse(data)
        #expect(cue.encoding == encoding)
        #expect(cue.performer == "山田太郎")
        #expect(cue.tracks.map(\.title) == ["はじまり"])
        let output = try cue.rewritten(original: data, track: 1, title: "終わり", performer: nil, songwriter: nil, isrc: nil)
        #expect(Array(output.prefix(2)) == mark)
        let reread = try parse(output)
        #expect(reread.encoding == encoding && reread.tracks.map(\.title) == ["終わり"] && reread.performer == "山田太郎")
    }

    @Test func parsesAWindows1252Sheet() throws {
        let data = sheet(
            [
                "PERFORMER \"Mötley Crüe\"", "TITLE \"Café Society\"", "FILE \"Café.wav\" WAVE",
                "  TRACK 01 AUDIO", "    TITLE \"Naïve – “Quoted”\"", "    INDEX 01 00:00:00",
            ], encoding: .windows1252)
        #expect(data.contains(0xE9), "é is byte 0xE9")
        #expect(data.contains(0xF6), "ö is byte 0xF6")
        let cue = try parse(data)
        #expect(cue.encoding == .windows1252)
        #expect(cue.performer == "Mötley Crüe")
        #expect(cue.title == "Café Society")
        #expect(cue.files == ["Café.wav"])
        #expect(cue.tracks[0].title == "Naïve – “Quoted”")
    }

    @Test func detectsEncodings() {
        #expect(TextEncoding.detect(Data("TITLE \"plain\"".utf8)) == .utf8)
        #expect(TextEncoding.detect(Data([0xEF, 0xBB, 0xBF]) + Data("TITLE x".utf8)) == .utf8BOM)
        #expect(TextEncoding.detect(Data([0xFF, 0xFE, 0x54, 0x00])) == .utf16LE)
        #expect(TextEncoding.detect(Data([0xFE, 0xFF, 0x00, 0x54])) == .utf16BE)
        #expect(TextEncoding.detect(Data([0x43, 0x61, 0x66, 0xE9])) == .windows1252)
        // Half-width kana alone (0xB1) is also Latin-1 text; without a double-byte pair it is not taken for Shift-JIS.
        #expect(TextEncoding.detect(Data([0x41, 0xB1, 0x42])) == .windows1252)
        #expect(TextEncoding.detect(Data([0x93, 0xFA, 0x96, 0x7B])) == .shiftJIS)
        // A lead byte without a trail byte is not Shift-JIS.
        #expect(TextEncoding.detect(Data([0x93, 0xFA, 0x96])) == .windows1252)
        // Bytes Windows-1252 leaves undefined still read, and write back as themselves.
        #expect(TextEncoding.windows1252.decode(Data([0x41, 0x81, 0x80])) == "A\u{81}€")
        #expect(TextEncoding.windows1252.encode("A\u{81}€") == Data([0x41, 0x81, 0x80]))
    }

    @Test func toleratesSyntaxVariants() throws {
        let lines = [
            "", "rem genre Jazz", "rem some other remark", "   ", "performer Solo Artist",
            "\tFile Some Name.flac WAVE", "CDTEXTFILE \"x.cdt\"", "\ttrack 1 audio", "\t\ttitle Unquoted Words Here",
            "\t\tpregap 00:02:00", "\t\tindex 1 0:0:0", "\tTRACK 02 AUDIO", "\t\tTITLE \"Unclosed quote",
            "\t\tPERFORMER \"Quoted\" trailing words", "\t\tINDEX 01 100:00:00",
        ]
        for ending in ["\r\n", "\n", "\r"] {
            let cue = try parse(sheet(lines, ending: ending))
            #expect(cue.genre == "Jazz")
            #expect(cue.performer == "Solo Artist")
            #expect(cue.files == ["Some Name.flac"])
            #expect(cue.tracks.map(\.title) == ["Unquoted Words Here", "Unclosed quote"])
            #expect(cue.tracks[1].performer == "Quoted")
            expectSeconds(cue.tracks[1].start, 6000)
        }
        // No final line end, and no type on the FILE line.
        let bare = Data("FILE a.wav\nTRACK 01 AUDIO\nINDEX 01 00:00:00".utf8)
        let cue = try parse(bare)
        #expect(cue.files == ["a.wav"])
        #expect(cue.tracks.count == 1)
    }

    @Test func minutesSecondsAndFramesBecomeSeconds() throws {
        let cue = try parse(
            sheet([
                "FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 01:02:37",
                "TRACK 02 AUDIO", "INDEX 01 120:00:74", "TRACK 03 AUDIO", "INDEX 01 120:59:00",
            ]))
        expectSeconds(cue.tracks[0].start, 62.493_333_333_333_33)
        expectSeconds(cue.tracks[1].start, 7200 + 74.0 / 75)
        expectSeconds(cue.tracks[2].start, 7259)
    }

    @Test func skipsDataTracks() throws {
        let cue = try parse(
            sheet([
                "FILE \"audio.wav\" WAVE", "TRACK 01 AUDIO", "TITLE \"One\"", "INDEX 01 00:00:00",
                "FILE \"data.bin\" BINARY", "TRACK 02 MODE1/2352", "TITLE \"Data\"", "INDEX 01 00:00:00",
            ]))
        #expect(cue.files == ["audio.wav", "data.bin"])
        #expect(cue.tracks.map(\.number) == [1])
        #expect(cue.slices(fileDurations: [:]).map(\.file) == ["audio.wav"])
    }

    // MARK: - Slices

    @Test func slicesKeepPregapsInThePreviousTrack() throws {
        let cue = try parse(sheet(eacSheet))
        let slices = cue.slices(fileDurations: ["The Band - Live at the Hall.flac": 600])
        #expect(slices.map(\.number) == [1, 2, 3])
        #expect(slices.map(\.start) == [0, 240, 450 + 12.0 / 75])
        // Track 2's INDEX 00 (03:58:40) stays within track 1, as a CD player plays it.
        #expect(slices.map(\.end) == [240, 450 + 12.0 / 75, 600])
        let trackNumbers = slices.map { $0.track?.number }
        #expect(trackNumbers == [1, 2, 3])
        #expect(cue.slices(fileDurations: [:]).last?.end == nil)
    }

    @Test func audioBeforeTrackOneBecomesAHiddenTrackZero() throws {
        let withPregap = try parse(
            sheet([
                "FILE \"a.flac\" WAVE", "TRACK 01 AUDIO", "INDEX 00 00:00:00", "INDEX 01 00:32:10", "TRACK 02 AUDIO", "INDEX 01 04:00:00",
            ]))
        expectSeconds(withPregap.tracks[0].pregap, 0)
        let slices = withPregap.slices(fileDurations: [:])
        #expect(slices.map(\.number) == [0, 1, 2])
        #expect(slices[0].track == nil)
        #expect(slices[0].start == 0)
        expectSeconds(slices[0].end, 32 + 10.0 / 75)
        expectSeconds(slices[1].start, 32 + 10.0 / 75)

        let withoutPregap = try parse(sheet(["FILE \"a.flac\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:05:00"]))
        #expect(withoutPregap.slices(fileDurations: [:]).map(\.number) == [0, 1])

        // A second or less before track 1 is lead-in slack, not a track.
        let short = try parse(sheet(["FILE \"a.flac\" WAVE", "TRACK 01 AUDIO", "INDEX 00 00:00:00", "INDEX 01 00:01:00"]))
        #expect(short.slices(fileDurations: [:]).map(\.number) == [1])
    }

    @Test func aTwoFileSheetSlicesEachFileByItself() throws {
        let cue = try parse(
            sheet([
                "TITLE \"Double\"",
                "FILE \"CD1.flac\" WAVE", "  TRACK 01 AUDIO", "    INDEX 01 00:00:00", "  TRACK 02 AUDIO", "    INDEX 01 03:00:00",
                "FILE \"CD2.flac\" WAVE", "  TRACK 03 AUDIO", "    INDEX 01 00:00:00", "  TRACK 04 AUDIO",
                "    INDEX 00 02:58:00", "    INDEX 01 03:00:00",
            ]))
        #expect(cue.files == ["CD1.flac", "CD2.flac"])
        #expect(cue.tracks.map(\.file) == ["CD1.flac", "CD1.flac", "CD2.flac", "CD2.flac"])
        let slices = cue.slices(fileDurations: ["CD1.flac": 400])
        #expect(slices.map(\.number) == [1, 2, 3, 4])
        #expect(slices.map(\.file) == ["CD1.flac", "CD1.flac", "CD2.flac", "CD2.flac"])
        #expect(slices.map(\.start) == [0, 180, 0, 180])
        #expect(slices.map(\.end) == [180, 400, 180, nil])
    }

    @Test func aPregapInThePreviousFileIsNotTheTracksPregap() throws {
        // Gaps saved at the end of the previous track's file: track 2's INDEX 00 is in 01.wav, its INDEX 01 in 02.wav.
        let cue = try parse(
            sheet([
                "FILE \"01.wav\" WAVE", "  TRACK 01 AUDIO", "    TITLE \"One\"", "    INDEX 01 00:00:00",
                "  TRACK 02 AUDIO", "    TITLE \"Two\"", "    INDEX 00 04:10:50",
                "FILE \"02.wav\" WAVE", "    INDEX 01 00:00:00",
            ]))
        #expect(cue.tracks.map(\.file) == ["01.wav", "02.wav"])
        #expect(cue.tracks[1].pregap == nil)
        #expect(cue.tracks[1].title == "Two")
        let slices = cue.slices(fileDurations: ["01.wav": 252, "02.wav": 200])
        #expect(slices.map(\.file) == ["01.wav", "02.wav"])
        #expect(slices.map(\.start) == [0, 0])
        #expect(slices.map(\.end) == [252, 200])
    }

    // MARK: - Errors

    @Test func malformedSheetsFailWithTheirNameLineAndReason() throws {
        let noFile = parseError(["TITLE \"x\"", "REM DATE 2000"])
        #expect(noFile?.line == nil)
        #expect(noFile?.description == "album.cue: has no FILE line")

        #expect(parseError(["FILE \"a.wav\" WAVE"])?.description == "album.cue: has no audio TRACK")
        #expect(parseError(["FILE \"a.bin\" BINARY", "TRACK 01 MODE1/2352", "INDEX 01 00:00:00"])?.reason == "has no audio TRACK")

        let early = parseError(["TITLE \"x\"", "TRACK 01 AUDIO", "INDEX 01 00:00:00", "FILE \"a.wav\" WAVE"])
        #expect(early?.line == 2)
        #expect(early?.description == "album.cue: line 2: TRACK 01 comes before any FILE")

        let noStart = parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 00 00:00:00", "TRACK 02 AUDIO", "INDEX 01 01:00:00"])
        #expect(noStart?.description == "album.cue: line 2: TRACK 01 has no INDEX 01")
        #expect(parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "TITLE \"x\""])?.line == 2)

        for time in ["1:2", "00:60:00", "00:00:75", "aa:bb:cc", "00:00:00:00", "-1:00:00", "00::00", ""] {
            let error = parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 \(time)"])
            #expect(error?.line == 3, "\(time)")
            let description = error?.description ?? ""
            #expect(description.hasPrefix("album.cue: line 3: INDEX 01 is not mm:ss:ff"), "\(time): \(description)")
        }
        #expect(parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 00 0:61:00", "INDEX 01 00:00:00"])?.line == 3)

        let backwards = parseError([
            "FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00", "TRACK 02 AUDIO", "INDEX 01 05:00:00",
            "TRACK 03 AUDIO", "INDEX 01 04:59:74",
        ])
        #expect(backwards?.line == 7)
        #expect(backwards?.reason == "TRACK 03 starts at 04:59:74, not after TRACK 02 at 05:00:00 in \"a.wav\"")
        // Starting over in another file is not going backwards.
        #expect(throws: Never.self) {
            try parse(
                sheet([
                    "FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00", "TRACK 02 AUDIO", "INDEX 01 05:00:00",
                    "FILE \"b.wav\" WAVE", "TRACK 03 AUDIO", "INDEX 01 00:00:00",
                ]))
        }

        let twice = parseError(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00", "TRACK 01 AUDIO", "INDEX 01 01:00:00"])
        #expect(twice?.line == 4)
        #expect(parseError(["FILE \"a.wav\" WAVE", "TRACK AUDIO", "INDEX 01 00:00:00"])?.line == 2)

        var large = sheet(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00"])
        large.append(Data(repeating: 0x20, count: CueSheet.maxBytes))
        do {
            _ = try parse(large)
            Issue.record("a sheet over CueSheet.maxBytes parsed")
        } catch let error as CueSheetError {
            #expect(error.line == nil)
            #expect(error.description.hasPrefix("album.cue: is "))
        }
        #expect(throws: Never.self) { try parse(sheet(["FILE \"a.wav\" WAVE", "TRACK 01 AUDIO", "INDEX 01 00:00:00"])) }

        #expect(throws: CueSheetError.self) { try parse(Data([0xFF, 0xFE, 0x46, 0x00])) }
    }

    // MARK: - Rewriting

    @Test func rewriteReplacesInsertsAndRemovesOnlyThatTracksLines() throws {
        let original = sheet(eacSheet)
        let cue = try parse(original)
        let output = try cue.rewritten(
            original: original, track: 2, title: "New 'Title'",
            performer: nil, songwriter: "Someone Else", isrc: "GBXYZ9400002")
        var expected = byteLines(original)
        expected[17] = Array("    TITLE \"New 'Title'\"\r\n".utf8)
        expected.remove(at: 18)  // PERFORMER
        expected.insert(Array("    ISRC \"GBXYZ9400002\"\r\n".utf8), at: 17)
        #expect(byteLines(output) == expected)

        let again = try parse(output)
        #expect(again.tracks[1].title == "New 'Title'")
        #expect(again.tracks[1].performer == nil)
        #expect(again.tracks[1].songwriter == "Someone Else")
        #expect(again.tracks[1].isrc == "GBXYZ9400002")
        #expect(again.tracks.map(\.start) == cue.tracks.map(\.start))
        #expect(again.tracks[0] == cue.tracks[0])
        #expect(again.tracks[2] == cue.tracks[2])

        // Writing the values the sheet already has changes nothing, unquoted ISRC included.
        let same = try cue.rewritten(
            original: original, track: 1, title: "Intro", performer: "The Band", songwriter: nil, isrc: "USABC9400001")
        #expect(same == original)
    }

    @Test func rewriteInsertsWithTheTracksIndentAndLineEnds() throws {
        let original = sheet(["FILE \"a.wav\" WAVE", "\tTRACK 01 AUDIO", "\t\tINDEX 01 00:00:00"], ending: "\r")
        let cue = try parse(original)
        let output = try cue.rewritten(original: original, track: 1, title: "T", performer: "P", songwriter: nil, isrc: nil)
        #expect(
            String(decoding: output, as: UTF8.self) == "FILE \"a.wav\" WAVE\r\tTRACK 01 AUDIO\r\t\tTITLE \"T\"\r\t\tPERFORMER \"P\"\r\t\tINDEX 01 00:00:00\r")
        // The keyword keeps its spelling when its value changes.
        let lower = Data("file a.wav wave\ntrack 01 audio\n  title old\n  index 01 00:00:00".utf8)
        let rewritten = try parse(lower).rewritten(original: lower, track: 1, title: "new", performer: nil, songwriter: nil, isrc: nil)
        #expect(String(decoding: rewritten, as: UTF8.self) == "file a.wav wave\ntrack 01 audio\n  title \"new\"\n  index 01 00:00:00")
    }

    @Test func rewriteKeepsTheByteOrderMark() throws {
        let original = sheet(
            ["TITLE \"Album\"", "FILE \"a.wav\" WAVE", "  TRACK 01 AUDIO", "    TITLE \"Old\"", "    INDEX 01 00:00:00"],
            ending: "\n", encoding: .utf8BOM)
        let cue = try parse(original)
        let output = try cue.rewritten(original: original, track: 1, title: "Nouveau ✓", performer: nil, songwriter: nil, isrc: nil)
        #expect(Array(output.prefix(3)) == [0xEF, 0xBB, 0xBF])
        var expected = byteLines(original)
        expected[3] = Array("    TITLE \"Nouveau ✓\"\n".utf8)
        #expect(byteLines(output) == expected)
        let again = try parse(output)
        #expect(again.tracks[0].title == "Nouveau ✓")
        #expect(again.encoding == .utf8BOM)
    }

    @Test func rewriteWritesShiftJISAndRefusesWhatItCannotHold() throws {
        let original = sheet(
            [
                "TITLE \"夏の終わり\"", "FILE \"夏.wav\" WAVE", "  TRACK 01 AUDIO", "    TITLE \"はじまり\"", "    INDEX 01 00:00:00",
                "  TRACK 02 AUDIO", "    TITLE \"二曲目\"", "    INDEX 01 03:00:00",
            ], encoding: .shiftJIS)
        let cue = try parse(original)
        #expect(cue.encoding == .shiftJIS)
        // 〜 (WAVE DASH), as Macs type it, is written as CP932's ～ at the same code.
        let output = try cue.rewritten(original: original, track: 2, title: "新しい題名〜ﾗｲﾌﾞ", performer: "歌手", songwriter: nil, isrc: nil)
        let titleLine = try #require(TextEncoding.shiftJIS.encode("    TITLE \"新しい題名～ﾗｲﾌﾞ\"\r\n"))
        let performerLine = try #require(TextEncoding.shiftJIS.encode("    PERFORMER \"歌手\"\r\n"))
        var expected = byteLines(original)
        expected[6] = [UInt8](titleLine)
        expected.insert([UInt8](performerLine), at: 6)
        #expect(byteLines(output) == expected)
        let again = try parse(output)
        #expect(again.encoding == .shiftJIS)
        #expect(again.tracks[1].title == "新しい題名～ﾗｲﾌﾞ")
        #expect(again.tracks[1].performer == "歌手")

        do {
            _ = try cue.rewritten(original: original, track: 1, title: "Café", performer: nil, songwriter: nil, isrc: nil)
            Issue.record("\"Café\" was written in Shift-JIS")
        } catch {
            let description = String(describing: error)
            #expect(description.contains("\"Café\"") && description.contains("Shift-JIS"), "\(description)")
        }
    }

    @Test func rewriteWritesWindows1252AndRefusesWhatItCannotHold() throws {
        let original = sheet(
            ["PERFORMER \"Mötley Crüe\"", "FILE \"Café.wav\" WAVE", "  TRACK 01 AUDIO", "    INDEX 01 00:00:00"],
            encoding: .windows1252)
        let cue = try parse(original)
        let output = try cue.rewritten(original: original, track: 1, title: "Café del Mar", performer: nil, songwriter: nil, isrc: nil)
        var expected = byteLines(original)
        expected.insert(Array("    TITLE \"Caf".utf8) + [0xE9] + Array(" del Mar\"\r\n".utf8), at: 3)
        #expect(byteLines(output) == expected)
        let again = try parse(output)
        #expect(again.tracks[0].title == "Café del Mar")
        // A decomposed é (e + U+0301) is composed before it is written.
        let decomposed = try cue.rewritten(original: original, track: 1, title: "Cafe\u{301}", performer: nil, songwriter: nil, isrc: nil)
        let composed = try parse(decomposed)
        #expect(composed.tracks[0].title == "Café")

        do {
            _ = try cue.rewritten(original: original, track: 1, title: "日本", performer: nil, songwriter: nil, isrc: nil)
            Issue.record("\"日本\" was written in Windows-1252")
        } catch {
            #expect(error.reason == "TITLE of TRACK 01 \"日本\" cannot be written in the sheet's encoding, Windows-1252")
        }
    }

    @Test func rewriteRefusesWhatASheetCannotHold() throws {
        let original = sheet(eacSheet)
        let cue = try parse(original)
        let quoted = "a \"b\""
        do {
            _ = try cue.rewritten(original: original, track: 1, title: quoted, performer: nil, songwriter: nil, isrc: nil)
            Issue.record("a title with double quotes was written")
        } catch {
            let description = String(describing: error)
            #expect(description.contains("double quote"), "\(description)")
        }
        do {
            _ = try cue.rewritten(original: original, track: 1, title: nil, performer: "a\nb", songwriter: nil, isrc: nil)
            Issue.record("a performer with a line break was written")
        } catch {
            let description = String(describing: error)
            #expect(description.contains("line break"), "\(description)")
        }
        do {
            _ = try cue.rewritten(original: original, track: 9, title: "x", performer: nil, songwriter: nil, isrc: nil)
            Issue.record("a track the sheet does not have was written")
        } catch {
            #expect(String(describing: error) == "album.cue: has no audio TRACK 9")
        }
    }
}

import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

/// Valid audio files TagLib 1.13 refuses or does not know, as ffmpeg (or the byte writers in
/// ShelfTestSupport, for what ffmpeg cannot write) makes them: each is imported with its title,
/// duration and stream properties, and keeps its identity through a retag.
@Suite struct OddFormatImportTests {
    enum Kind: String, CaseIterable, Sendable {
        case mp4FLAC, mp4Opus, mp4AC3, mp4EAC3, rf64, zeroChunkWAV, streamedWAV, adts, multiplexedOgg, matroska, trueAudio
        case dsf, dff, mod, xm, s3m, it

        var fileExtension: String {
            switch self {
            case .mp4FLAC, .mp4Opus, .mp4AC3, .mp4EAC3: "m4a"
            case .rf64, .zeroChunkWAV, .streamedWAV: "wav"
            case .adts: "aac"
            case .multiplexedOgg: "ogg"
            case .matroska: "mka"
            case .trueAudio: "tta"
            case .dsf: "dsf"
            case .dff: "dff"
            case .mod: "mod"
            case .xm: "xm"
            case .s3m: "s3m"
            case .it: "it"
            }
        }

        /// What an import must find: sample rate, channels, duration in seconds, codec.
        var expected: (rate: Int, channels: Int, seconds: Double, codec: String) {
            switch self {
            case .mp4FLAC: (44_100, 1, 1, "flac")
            case .mp4Opus: (48_000, 1, 1, "opus")
            case .mp4AC3: (44_100, 1, 1, "ac3")
            case .mp4EAC3: (44_100, 1, 1, "eac3")
            case .rf64, .zeroChunkWAV, .streamedWAV: (44_100, 1, 1, "pcm")
            case .adts: (44_100, 1, 1, "aac")
            case .multiplexedOgg: (44_100, 1, 1, "vorbis")
            case .matroska: (44_100, 1, 1, "flac")
            case .trueAudio: (44_100, 1, 1, "tta")
            case .dsf, .dff: (2_822_400, 2, 0.1, "dsd")
            // 64 rows at speed 6 and 125 BPM, rendered by libopenmpt at 48 kHz stereo.
            case .mod, .xm, .s3m, .it: (48_000, 2, 7.68, rawValue)
            }
        }

        /// ffmpeg's encoder options and muxer for the kinds ffmpeg writes.
        var ffmpegOutput: [String]? {
            switch self {
            case .mp4FLAC: ["-c:a", "flac", "-strict", "-2", "-f", "mp4"]
            case .mp4Opus: ["-c:a", "libopus", "-strict", "-2", "-f", "mp4"]
            case .mp4AC3: ["-c:a", "ac3", "-f", "mp4"]
            case .mp4EAC3: ["-c:a", "eac3", "-f", "mp4"]
            case .rf64: ["-c:a", "pcm_s16le", "-rf64", "always", "-f", "wav"]
            case .adts: ["-c:a", "aac", "-write_id3v2", "1", "-f", "adts"]
            case .multiplexedOgg: ["-c:a", "libvorbis", "-f", "ogg"]
            case .matroska: ["-c:a", "flac", "-f", "matroska"]
            case .trueAudio: ["-c:a", "tta", "-f", "tta"]
            default: nil
            }
        }

        /// Writes the file with `title`; `variant` changes the audio (the tone, or the pattern).
        func write(_ url: URL, title: String, variant: Int) throws {
            let frequency = 300 + variant * 110
            if let output = ffmpegOutput {
                var inputs = ["-f", "lavfi", "-i", "sine=f=\(frequency):d=1"]
                var maps = ["-map", "0"]
                if self == .multiplexedOgg {  // a second audio stream in the same pages
                    inputs += ["-f", "lavfi", "-i", "sine=f=\(frequency * 2):d=1"]
                    maps += ["-map", "1"]
                }
                try FFmpegTool.run(inputs + maps + ["-metadata", "title=\(title)"] + output + [url.path])
                return
            }
            let data: Data
            switch self {
            case .zeroChunkWAV: data = TestAudio.wav(seconds: 1, frequency: Double(frequency), zeroChunk: "JUNK", title: title)
            case .streamedWAV: data = TestAudio.wav(seconds: 1, frequency: Double(frequency), zeroChunk: nil, streamed: true, title: title)
            case .dsf: data = TestAudio.dsf(seed: variant, title: title)
            case .dff: data = TestAudio.dff(seed: variant, title: title)
            case .mod: data = TestAudio.mod(title: title, seed: variant)
            case .xm: data = TestAudio.xm(title: title, seed: variant)
            case .s3m: data = TestAudio.s3m(title: title, seed: variant)
            case .it: data = TestAudio.it(title: title, seed: variant)
            default: preconditionFailure("\(self) is written by ffmpeg")
            }
            try data.write(to: url)
        }

        /// Gives the file at `source` the title `title` at `destination`, its audio untouched:
        /// ffmpeg copies the streams, TagLib edits a WAV it reads, the byte writers write the
        /// same audio again (the formats ffmpeg cannot write, or cannot write a title into).
        func retag(_ source: URL, to destination: URL, title: String, variant: Int) throws {
            if let output = ffmpegOutput {
                // The muxer and its options stay, the encoder goes: the streams are copied.
                var copy: [String] = []
                var index = 0
                while index < output.count {
                    if output[index] == "-c:a" {
                        index += 2
                        continue
                    }
                    copy.append(output[index])
                    index += 1
                }
                try FFmpegTool.run(
                    [
                        "-i", source.path, "-map", "0", "-c", "copy", "-metadata", "title=\(title)",
                        "-metadata:s:a", "title=\(title)",
                    ] + copy + [destination.path])
            } else if self == .zeroChunkWAV {
                try FileManager.default.copyItem(at: source, to: destination)
                try TagFile.write(destination, ["TITLE": title])
            } else {
                try write(destination, title: title, variant: variant)
            }
        }
    }

    /// Every kind, each its own tone, in one folder beside things that are not audio.
    static func folder(_ dir: TemporaryDirectory) throws -> URL {
        let music = dir.path("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        for (index, kind) in Kind.allCases.enumerated() {
            try kind.write(music.appendingPathComponent("\(kind.rawValue).\(kind.fileExtension)"), title: "Title \(kind.rawValue)", variant: index)
        }
        return music
    }

    @Test func everyOddFormatIsImportedWithItsTitleDurationAndStream() async throws {
        let dir = try TemporaryDirectory()
        let music = try Self.folder(dir)
        try Data("FILE \"x.wav\" WAVE\n".utf8).write(to: music.appendingPathComponent("album.cue"))
        try Data("rip log".utf8).write(to: music.appendingPathComponent("rip.log"))
        try TestPictures.jpeg(width: 16, height: 16).write(to: music.appendingPathComponent("cover.jpg"))
        let library = Library(directory: dir.path("lib"))
        try await library.disableMirror()
        let report = try await library.importFiles(at: [music])
        #expect(report.failed.isEmpty, "\(report.failed)")
        #expect(report.added == Kind.allCases.count && report.duplicates.isEmpty, "\(report)")
        let tracks = try await library.page(LibraryQuery(sort: .path), offset: 0, limit: 100).items
        let byName = Dictionary(uniqueKeysWithValues: tracks.map { (URL(fileURLWithPath: $0.path).deletingPathExtension().lastPathComponent, $0) })
        for kind in Kind.allCases {
            let track = try #require(byName[kind.rawValue], "\(kind) not imported")
            let expected = kind.expected
            #expect(track.title == "Title \(kind.rawValue)", "\(kind)")
            #expect(track.sampleRate == expected.rate && track.channels == expected.channels, "\(kind): \(track)")
            #expect(abs((track.duration ?? 0) - expected.seconds) < 0.1 * expected.seconds, "\(kind): \(track.duration ?? 0)")
            #expect(track.codec == expected.codec, "\(kind)")
            // A module of a few hundred bytes playing for seconds is under 1 kbit/s: no bitrate.
            if ![.mod, .xm, .s3m, .it].contains(kind) { #expect((track.bitrate ?? 0) > 0, "\(kind)") }
            #expect(track.audioHash?.hasPrefix("v1:") == true, "\(kind)")
        }
        #expect(Set(tracks.compactMap(\.audioHash)).count == Kind.allCases.count, "every file's audio is distinct")

        // Every file retagged and moved into another folder: each is recognised as its track.
        let moved = dir.path("moved")
        try FileManager.default.createDirectory(at: moved, withIntermediateDirectories: true)
        for (index, kind) in Kind.allCases.enumerated() {
            let source = music.appendingPathComponent("\(kind.rawValue).\(kind.fileExtension)")
            try kind.retag(source, to: moved.appendingPathComponent("\(kind.rawValue)-new.\(kind.fileExtension)"), title: "New \(index)", variant: index)
            try FileManager.default.removeItem(at: source)
        }
        let again = try await library.importFiles(at: [moved])
        #expect(again.moved == Kind.allCases.count && again.added == 0 && again.failed.isEmpty, "\(again)")
        for track in try await library.page(LibraryQuery(sort: .path), offset: 0, limit: 100).items {
            #expect(track.path.hasPrefix(moved.path) && track.title?.hasPrefix("New ") == true, "\(track.path)")
        }
    }

    @Test(arguments: Kind.allCases)
    func aRetagKeepsTheIdentityAndOtherAudioChangesIt(_ kind: Kind) async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let original = dir.path("a.\(kind.fileExtension)")
            try kind.write(original, title: "First", variant: 1)
            let retagged = dir.path("b.\(kind.fileExtension)")
            try kind.retag(original, to: retagged, title: "Another, longer one", variant: 1)
            let (before, identity) = try AudioFile.read(original)
            let (after, retaggedIdentity) = try AudioFile.read(retagged)
            #expect(before.properties["TITLE"] == "First" && after.properties["TITLE"] == "Another, longer one", "\(kind)")
            #expect(retaggedIdentity == identity, "\(kind)")
            #expect(try AudioIdentity.of(retagged) == AudioIdentity.of(original), "\(kind)")
            let other = dir.path("c.\(kind.fileExtension)")
            try kind.write(other, title: "First", variant: 2)
            #expect(try AudioIdentity.of(other) != identity, "\(kind)")
        }
    }

    @Test func tagLibReadsTrueAudiosAPETagAndNeverWritesIntoContainersItMistakes() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let tta = dir.path("a.tta")
            try Kind.trueAudio.write(tta, title: "From APE", variant: 0)
            let tags = try TagFile.read(tta)  // TagLib's own path, the APEv2 tag ffmpeg wrote included
            #expect(tags.properties["TITLE"] == "From APE" && tags.codec == "tta" && tags.sampleRate == 44_100)
            for kind in [Kind.matroska, .dsf, .dff] {
                let url = dir.path("x.\(kind.fileExtension)")
                try kind.write(url, title: "Kept", variant: 0)
                let bytes = try Data(contentsOf: url)
                #expect(throws: TagError.self, "\(kind)") { try TagFile.write(url, ["TITLE": "Overwritten"]) }
                #expect(throws: TagError.self, "\(kind)") { try TagFile.writePicture(url, nil) }
                #expect(try Data(contentsOf: url) == bytes, "\(kind) unchanged")
            }
        }
    }

    @Test func brokenFilesWithAudioExtensionsFailWithTheirReasonAndTheRestIsLeftOut() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        let good = music.appendingPathComponent("good.mka")
        try Kind.matroska.write(good, title: "Good", variant: 0)
        let mka = try Data(contentsOf: good)
        let dsf = TestAudio.dsf(title: "x")
        var broken: [String: Data] = [
            "header-only.mka": mka.prefix(40),
            "truncated.dsf": dsf.prefix(20),
            "empty.tta": Data(),
            "text.mod": Data("just some text, not a module".utf8),
            "cut.dff": TestAudio.dff(title: "x").prefix(16),
        ]
        // A DSF whose chunk names are right but whose format chunk is nonsense: Shelf's layout
        // check hands it to ffprobe, which refuses it.
        var lying = dsf
        lying.replaceSubrange(40..<64, with: Data(repeating: 0xFF, count: 24))
        broken["lying.dsf"] = lying
        var random = SeededRandom(seed: 14)
        for ext in ["mka", "dsf", "dff", "xm", "s3m", "it", "aac", "tta"] {
            broken["noise.\(ext)"] = Data((0..<2_000).map { _ in UInt8(random.int(0...255)) })
        }
        for (name, data) in broken { try data.write(to: music.appendingPathComponent(name)) }
        for name in ["cover.png", "album.cue", "rip.log", "notes.txt"] { try Data("not audio".utf8).write(to: music.appendingPathComponent(name)) }

        let library = Library(directory: dir.path("lib"))
        try await library.disableMirror()
        let report = try await library.importFiles(at: [music])
        #expect(report.added == 1, "\(report)")
        #expect(Set(report.failed.map { URL(fileURLWithPath: $0.path).lastPathComponent }) == Set(broken.keys), "\(report.failed)")
        for failure in report.failed {
            #expect(failure.error.hasPrefix("cannot read \(failure.path): ") || failure.error.hasPrefix("invalid audio file \(failure.path): "), "\(failure)")
            #expect(failure.error.count > failure.path.count + 20, "a reason: \(failure)")
        }
        let lyingFailure = try #require(report.failed.first { $0.path.hasSuffix("lying.dsf") })
        #expect(lyingFailure.error.contains("ffprobe"), "\(lyingFailure)")
    }

    @Test func aMissingFFprobeIsATypedError() throws {
        #expect(throws: FFprobeError.notInstalled(searched: "/nonexistent:/also-missing")) {
            try FFprobe.locate(searchPath: "/nonexistent:/also-missing")
        }
        #expect(throws: FFprobeError.notInstalled(searched: "/nonexistent/ffprobe")) { try FFprobe.locate(path: "/nonexistent/ffprobe") }
        #expect(FFprobeError.notInstalled(searched: "/x").description.contains("apt-get install ffmpeg"))
        #expect(try FFprobe.locate().executable.hasSuffix("/ffprobe"), "ffprobe is installed by `make deps`")
    }

    @Test func ffmpegsMetadataKeysBecomeTagLibsUnifiedOnes() async throws {
        try await offCooperativePool {
            #expect(FFprobe.unifiedKey("album_artist") == "ALBUMARTIST" && FFprobe.unifiedKey("ALBUMARTIST") == "ALBUMARTIST")
            #expect(FFprobe.unifiedKey("sort_artist") == "ARTISTSORT" && FFprobe.unifiedKey("track") == "TRACKNUMBER")
            #expect(FFprobe.unifiedKey("lyrics-eng") == "LYRICS" && FFprobe.unifiedKey("encoder") == nil)
            var properties = ["TRACKNUMBER": "3"]
            FFprobe.addTotals(&properties, ["TRACKTOTAL": "12"], [:])
            #expect(properties["TRACKNUMBER"] == "3/12")
        }
    }
}

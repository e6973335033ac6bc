import Foundation

/// Why a test could not make its files: the tool is missing (tests fail, they never pass
/// silently without it) or it refused.
public struct TestToolError: Error, CustomStringConvertible {
    /// What went wrong, naming the tool.
    public let description: String
}

/// ffmpeg for tests that need files only an encoder can write (`make deps` installs it).
public enum FFmpegTool {
    /// The first `ffmpeg` on PATH.
    public static func locate() throws -> String {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/ffmpeg"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestToolError(description: "ffmpeg is not installed (run `make deps`): these tests need it to write their files")
    }

    /// Runs ffmpeg quietly with `arguments` (overwriting outputs); throws with its last error line.
    public static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try locate())
        process.arguments = ["-nostdin", "-hide_banner", "-v", "error", "-y"] + arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.allBytes()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw TestToolError(description: "ffmpeg \(arguments.joined(separator: " ")) failed: \(text)")
        }
    }
}

/// Little-endian and big-endian integers appended to bytes.
extension Data {
    fileprivate mutating func le(_ value: Int, _ bytes: Int) {
        for index in 0..<bytes { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    fileprivate mutating func be(_ value: Int, _ bytes: Int) {
        for index in (0..<bytes).reversed() { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    fileprivate mutating func text(_ value: String, padded length: Int? = nil) {
        let bytes = Array(value.utf8)
        append(contentsOf: length.map { Array(bytes.prefix($0)) + [UInt8](repeating: 0, count: Swift.max(0, $0 - bytes.count)) } ?? bytes)
    }
}

extension TestAudio {
    /// A 16-bit mono PCM WAV whose `fmt ` chunk is followed by a chunk of size 0 before `data`
    /// (`zeroChunk`), or whose `data` chunk says size 0 as a streaming writer leaves it
    /// (`streamed`); `title` goes in a LIST/INFO chunk before `data`.
    public static func wav(seconds: Double, frequency: Double, zeroChunk: String?, streamed: Bool = false, title: String? = nil) -> Data {
        let samples = sine(seconds: seconds, sampleRate: 44_100, channels: 1, frequency: frequency)
        var body = Data("WAVEfmt ".utf8)
        body.le(16, 4)
        body.le(1, 2)
        body.le(1, 2)
        body.le(44_100, 4)
        body.le(88_200, 4)
        body.le(2, 2)
        body.le(16, 2)
        if let zeroChunk {
            body.text(zeroChunk, padded: 4)
            body.le(0, 4)
        }
        if let title {
            let name = Data(title.utf8) + Data([0])
            let pad = name.count % 2
            body.text("LIST")
            body.le(4 + 8 + name.count + pad, 4)
            body.text("INFOINAM")
            body.le(name.count, 4)
            body.append(name)
            if pad == 1 { body.append(0) }
        }
        body.text("data")
        body.le(streamed ? 0 : samples.count * 2, 4)
        for sample in samples { body.le(Int(sample), 2) }
        var data = Data("RIFF".utf8)
        data.le(body.count, 4)
        return data + body
    }

    /// How many bytes a channel of one-bit DSD64 needs for `seconds`.
    static func dsdBytes(seconds: Double) -> Int { Int(seconds * 2_822_400 / 8) }

    /// An ID3v2.3 tag holding one TIT2 frame.
    static func id3Title(_ title: String) -> Data {
        var frame = Data("TIT2".utf8)
        frame.be(title.utf8.count + 1, 4)
        frame.le(0, 2)
        frame.append(3)  // UTF-8
        frame.text(title)
        var tag = Data("ID3".utf8)
        tag.append(contentsOf: [3, 0, 0])
        for shift in [21, 14, 7, 0] { tag.append(UInt8((frame.count >> shift) & 0x7F)) }  // syncsafe
        return tag + frame
    }

    /// A stereo DSD64 DSF file (Sony's layout: `DSD `, `fmt `, `data` in 4096-byte blocks per
    /// channel, then an ID3v2 tag with `title` where the header's metadata pointer says).
    public static func dsf(seconds: Double = 0.1, seed: Int = 0, title: String) -> Data {
        let perChannel = dsdBytes(seconds: seconds)
        let block = 4096
        let blocks = (perChannel + block - 1) / block
        var samples = Data()
        for _ in 0..<blocks {
            for channel in 0..<2 {
                samples.append(contentsOf: (0..<block).map { UInt8(0x69 ^ (($0 &* 7 &+ channel &+ seed) & 0x0F)) })
            }
        }
        var format = Data("fmt ".utf8)
        format.le(52, 8)
        for value in [1, 0, 2, 2, 2_822_400, 1] { format.le(value, 4) }  // version, DSD raw, stereo, 2 channels, rate, 1 bit
        format.le(perChannel * 8, 8)
        format.le(block, 4)
        format.le(0, 4)
        var sound = Data("data".utf8)
        sound.le(12 + samples.count, 8)
        sound.append(samples)
        let tag = id3Title(title)
        var data = Data("DSD ".utf8)
        data.le(28, 8)
        data.le(28 + format.count + sound.count + tag.count, 8)
        data.le(28 + format.count + sound.count, 8)
        return data + format + sound + tag
    }

    /// A DSDIFF chunk: ID, 64-bit big-endian size, body, a pad byte to even.
    static func dffChunk(_ id: String, _ body: Data) -> Data {
        var chunk = Data()
        chunk.text(id, padded: 4)
        chunk.be(body.count, 8)
        chunk.append(body)
        if body.count % 2 == 1 { chunk.append(0) }
        return chunk
    }

    /// A stereo, uncompressed DSD64 DSDIFF file (FVER, PROP with FS/CHNL/CMPR, `DSD ` sound,
    /// then DIIN with the title in DITI).
    public static func dff(seconds: Double = 0.1, seed: Int = 0, title: String) -> Data {
        var rate = Data()
        rate.be(2_822_400, 4)
        var channels = Data()
        channels.be(2, 2)
        channels.text("SLFTSRGT")
        var compression = Data("DSD ".utf8)
        let name = "not compressed"
        compression.append(UInt8(name.utf8.count))
        compression.text(name)
        if (name.utf8.count + 1) % 2 == 1 { compression.append(0) }
        let properties = Data("SND ".utf8) + dffChunk("FS  ", rate) + dffChunk("CHNL", channels) + dffChunk("CMPR", compression)
        let sound = Data((0..<dsdBytes(seconds: seconds) * 2).map { UInt8(0x69 ^ (($0 &+ seed) & 0x0F)) })
        var version = Data()
        version.be(0x0105_0000, 4)
        var titleText = Data()
        titleText.be(title.utf8.count, 4)
        titleText.text(title)
        let body =
            Data("DSD ".utf8) + dffChunk("FVER", version) + dffChunk("PROP", properties) + dffChunk("DSD ", sound)
            + dffChunk("DIIN", dffChunk("DITI", titleText))
        var data = Data("FRM8".utf8)
        data.be(body.count, 8)
        return data + body
    }

    /// A tracker module's one instrument: 64 bytes of a square wave, the pitch set by `seed`.
    static func square(seed: Int, signed: Bool) -> [UInt8] {
        let period = 4 + seed % 12
        return (0..<64).map { index in
            let high = (index / period) % 2 == 0
            return signed ? UInt8(bitPattern: high ? 100 : -100) : (high ? 228 : 28)
        }
    }

    /// A 4-channel ProTracker module ("M.K."): one sample, one pattern whose first row plays it.
    public static func mod(title: String, seed: Int = 0) -> Data {
        let sample = square(seed: seed, signed: true)
        var data = Data()
        data.text(title, padded: 20)
        for index in 0..<31 {
            data.text(index == 0 ? "square" : "", padded: 22)
            data.be(index == 0 ? sample.count / 2 : 0, 2)  // length in words
            data.append(contentsOf: [0, 64])  // finetune, volume
            data.be(0, 2)
            data.be(index == 0 ? sample.count / 2 : 1, 2)  // loop over the whole sample
        }
        data.append(contentsOf: [1, 127])  // song length, restart
        data.append(contentsOf: [UInt8](repeating: 0, count: 128))
        data.text("M.K.")
        var pattern = [UInt8](repeating: 0, count: 64 * 4 * 4)
        pattern[0..<4] = [0x01, 0xAC, 0x10, 0x00]  // sample 1, period 428 (C-2)
        data.append(contentsOf: pattern)
        data.append(contentsOf: sample)
        return data
    }

    /// A Scream Tracker 3 module ("SCRM"): one sample, one pattern playing it on channel 1.
    public static func s3m(title: String, seed: Int = 0) -> Data {
        let sample = square(seed: seed, signed: false)
        let instrumentOffset = 112
        let sampleOffset = 192
        let patternOffset = 256
        var data = Data()
        data.text(title, padded: 28)
        data.append(contentsOf: [0x1A, 16, 0, 0])
        for value in [2, 1, 1, 0, 0x1320, 2] { data.le(value, 2) }  // orders, instruments, patterns, flags, tracker, unsigned samples
        data.text("SCRM")
        data.append(contentsOf: [64, 6, 125, 0xB0, 16, 0])
        data.append(contentsOf: [UInt8](repeating: 0, count: 10))
        data.append(contentsOf: [0, 8] + [UInt8](repeating: 255, count: 30))  // channels 1 and 2, the rest unused
        data.append(contentsOf: [0, 255])  // orders: pattern 0, end
        data.le(instrumentOffset >> 4, 2)
        data.le(patternOffset >> 4, 2)
        data.append(contentsOf: [UInt8](repeating: 0, count: instrumentOffset - data.count))
        data.append(1)
        data.append(contentsOf: [UInt8](repeating: 0, count: 12))
        data.append(UInt8(sampleOffset >> 20))
        data.le((sampleOffset >> 4) & 0xFFFF, 2)
        for value in [sample.count, 0, sample.count] { data.le(value, 4) }
        data.append(contentsOf: [64, 0, 0, 1])  // volume, -, unpacked, looped
        data.le(8363, 4)
        data.append(contentsOf: [UInt8](repeating: 0, count: 12))
        data.text("square", padded: 28)
        data.text("SCRS")
        data.append(contentsOf: sample)
        let rows: [UInt8] = [0x20, 0x40, 1, 0] + [UInt8](repeating: 0, count: 63)  // C-4 with instrument 1, then empty rows
        data.le(rows.count + 2, 2)
        data.append(contentsOf: rows)
        return data
    }

    /// A FastTracker 2 module ("Extended Module: "): one instrument with one delta-coded sample.
    public static func xm(title: String, seed: Int = 0) -> Data {
        let sample = square(seed: seed, signed: true)
        var data = Data("Extended Module: ".utf8)
        data.text(title, padded: 20)
        data.append(0x1A)
        data.text("Shelf tests         ", padded: 20)
        data.le(0x0104, 2)
        data.le(276, 4)
        for value in [1, 0, 2, 1, 1, 1, 6, 125] { data.le(value, 2) }  // length, restart, channels, patterns, instruments, flags, tempo, BPM
        data.append(contentsOf: [UInt8](repeating: 0, count: 256))
        let rows: [UInt8] = [0x83, 49, 1, 0x80] + [UInt8](repeating: 0x80, count: 63 * 2)  // C-4 with instrument 1
        data.le(9, 4)
        data.append(0)
        data.le(64, 2)
        data.le(rows.count, 2)
        data.append(contentsOf: rows)
        data.le(243, 4)
        data.text("square", padded: 22)
        data.append(0)
        data.le(1, 2)
        data.le(40, 4)
        data.append(contentsOf: [UInt8](repeating: 0, count: 96 + 48 + 48 + 14 + 4))  // keymap, envelopes, their settings, fadeout
        for value in [sample.count, 0, sample.count] { data.le(value, 4) }
        data.append(contentsOf: [64, 0, 1, 128, 0, 0])  // volume, finetune, forward loop, panning, relative note
        data.text("square", padded: 22)
        var previous: UInt8 = 0
        for value in sample {
            data.append(value &- previous)
            previous = value
        }
        return data
    }

    /// An Impulse Tracker module ("IMPM") in sample mode: one sample, one pattern playing it.
    public static func it(title: String, seed: Int = 0) -> Data {
        let sample = square(seed: seed, signed: true)
        let sampleHeader = 192 + 2 + 4 + 4
        let sampleData = sampleHeader + 80
        let patternOffset = sampleData + sample.count
        var data = Data("IMPM".utf8)
        data.text(title, padded: 26)
        data.le(0x1004, 2)
        for value in [2, 0, 1, 1, 0x0214, 0x0214, 1 | 8, 0] { data.le(value, 2) }  // orders, instruments, samples, patterns, versions, flags
        data.append(contentsOf: [128, 48, 6, 125, 128, 0])
        data.le(0, 2)
        data.le(0, 4)
        data.le(0, 4)
        data.append(contentsOf: [UInt8](repeating: 32, count: 64) + [UInt8](repeating: 64, count: 64))
        data.append(contentsOf: [0, 255])
        data.le(sampleHeader, 4)
        data.le(patternOffset, 4)
        data.text("IMPS")
        data.append(contentsOf: [UInt8](repeating: 0, count: 13))
        data.append(contentsOf: [64, 1 | 16, 64])  // global volume, has data and loops, volume
        data.text("square", padded: 26)
        data.append(contentsOf: [1, 32])  // signed, default panning
        for value in [sample.count, 0, sample.count, 8363, 0, 0, sampleData] { data.le(value, 4) }
        data.append(contentsOf: [0, 0, 0, 0])
        data.append(contentsOf: sample)
        let rows: [UInt8] = [0x81, 0x03, 60, 1, 0] + [UInt8](repeating: 0, count: 63)  // channel 1: C-5, sample 1
        data.le(rows.count, 2)
        data.le(64, 2)
        data.le(0, 4)
        data.append(contentsOf: rows)
        return data
    }
}

import Foundation

/// Real audio files for tests, written byte by byte: no encoder is needed for PCM.
public enum TestAudio {
    /// A 16-bit PCM WAV file of a sine tone (`frequency` Hz), `seconds` long.
    public static func wav(seconds: Double = 0.5, sampleRate: Int = 44_100, channels: Int = 2, frequency: Double = 440) -> Data {
        let frames = Int(seconds * Double(sampleRate))
        var samples = Data(capacity: frames * channels * 2)
        for frame in 0..<frames {
            let value = Int16(sin(2 * Double.pi * frequency * Double(frame) / Double(sampleRate)) * 12_000)
            for _ in 0..<channels { withUnsafeBytes(of: value.littleEndian) { samples.append(contentsOf: $0) } }
        }
        var data = Data("RIFF".utf8)
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
        u32(36 + samples.count)
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(16)
        u16(1)  // PCM
        u16(channels)
        u32(sampleRate)
        u32(sampleRate * channels * 2)
        u16(channels * 2)
        u16(16)
        data.append(contentsOf: Array("data".utf8))
        u32(samples.count)
        data.append(samples)
        return data
    }
}

extension TestAudio {
    /// Interleaved 16-bit samples of a sine tone.
    static func sine(seconds: Double, sampleRate: Int, channels: Int, frequency: Double) -> [Int16] {
        let frames = Int(seconds * Double(sampleRate))
        var samples: [Int16] = []
        samples.reserveCapacity(frames * channels)
        for frame in 0..<frames {
            let value = Int16(sin(2 * Double.pi * frequency * Double(frame) / Double(sampleRate)) * 12_000)
            for _ in 0..<channels { samples.append(value) }
        }
        return samples
    }

    /// A 16-bit PCM AIFF file of a sine tone.
    public static func aiff(seconds: Double = 0.5, sampleRate: Int = 44_100, channels: Int = 2, frequency: Double = 440) -> Data {
        let samples = sine(seconds: seconds, sampleRate: sampleRate, channels: channels, frequency: frequency)
        var sound = Data()
        for sample in samples { withUnsafeBytes(of: sample.bigEndian) { sound.append(contentsOf: $0) } }
        var data = Data()
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(value).bigEndian) { data.append(contentsOf: $0) } }
        func u16(_ value: Int) { withUnsafeBytes(of: UInt16(value).bigEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("FORM".utf8))
        u32(4 + 26 + 16 + sound.count)
        data.append(contentsOf: Array("AIFFCOMM".utf8))
        u32(18)
        u16(channels)
        u32(samples.count / channels)
        u16(16)
        data.append(extended80(Double(sampleRate)))
        data.append(contentsOf: Array("SSND".utf8))
        u32(8 + sound.count)
        u32(0)
        u32(0)
        data.append(sound)
        return data
    }

    /// An IEEE 754 80-bit extended float (AIFF's sample rate), for positive whole numbers.
    static func extended80(_ value: Double) -> Data {
        var exponent = 16_383 + 63
        var mantissa = UInt64(value)
        while mantissa & (1 << 63) == 0 {
            mantissa <<= 1
            exponent -= 1
        }
        var data = Data()
        withUnsafeBytes(of: UInt16(exponent).bigEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: mantissa.bigEndian) { data.append(contentsOf: $0) }
        return data
    }

    /// An MPEG-1 Layer III stream (128 kbit/s, 44.1 kHz, joint stereo) of silent frames: every
    /// granule is empty, and the rest of each frame is ancillary data that decoders skip, filled
    /// from `seed` so that files differ in their audio identity.
    public static func mp3(seconds: Double = 0.5, seed: UInt64 = 0) -> Data {
        let frames = max(1, Int(seconds * 44_100 / 1_152))
        var random = SeededRandom(seed: seed &+ 1)
        var data = Data()
        for _ in 0..<frames {
            var frame = [UInt8](repeating: 0, count: 417)
            frame[0] = 0xFF
            frame[1] = 0xFB
            frame[2] = 0x90
            frame[3] = 0x40
            // 32 bytes of side information stay zero (no main data); the rest is ancillary.
            for index in 36..<417 { frame[index] = UInt8(truncatingIfNeeded: random.next()) }
            data.append(contentsOf: frame)
        }
        return data
    }

    /// A FLAC stream of a sine tone: STREAMINFO (MD5 left unset) and frames of verbatim
    /// subframes, with their CRCs, as any decoder reads them.
    public static func flac(seconds: Double = 0.5, sampleRate: Int = 44_100, channels: Int = 2, frequency: Double = 440) -> Data {
        let samples = sine(seconds: seconds, sampleRate: sampleRate, channels: channels, frequency: frequency)
        let totalFrames = samples.count / channels
        let blockSize = 4_096
        var data = Data("fLaC".utf8)
        var info = BitWriter()
        info.write(UInt64(blockSize), 16)
        info.write(UInt64(blockSize), 16)
        info.write(0, 24)
        info.write(0, 24)
        info.write(UInt64(sampleRate), 20)
        info.write(UInt64(channels - 1), 3)
        info.write(15, 5)
        info.write(UInt64(totalFrames), 36)
        for _ in 0..<16 { info.write(0, 8) }
        data.append(contentsOf: [0x80, 0, 0, 34])  // last metadata block, STREAMINFO, 34 bytes
        data.append(contentsOf: info.bytes)
        var frameNumber = 0
        var start = 0
        while start < totalFrames {
            let count = min(blockSize, totalFrames - start)
            var frame = BitWriter()
            frame.write(0x3FFE, 14)
            frame.write(0, 1)
            frame.write(0, 1)  // fixed block size
            frame.write(count == blockSize ? 12 : 7, 4)  // 4096, or 16-bit (count-1) at the end of the header
            frame.write(9, 4)  // 44.1 kHz
            frame.write(UInt64(channels - 1), 4)  // independent channels
            frame.write(4, 3)  // 16 bits per sample
            frame.write(0, 1)
            frame.writeUTF8(UInt64(frameNumber))
            if count != blockSize { frame.write(UInt64(count - 1), 16) }
            frame.write(UInt64(crc8(frame.bytes)), 8)
            for channel in 0..<channels {
                frame.write(0, 1)
                frame.write(1, 6)  // VERBATIM
                frame.write(0, 1)
                for index in 0..<count { frame.write(UInt64(UInt16(bitPattern: samples[(start + index) * channels + channel])), 16) }
            }
            frame.align()
            let crc = crc16(frame.bytes)
            frame.write(UInt64(crc), 16)
            data.append(contentsOf: frame.bytes)
            frameNumber += 1
            start += count
        }
        return data
    }

    /// An Ogg Opus stream: OpusHead, OpusTags, then 20 ms packets whose frame bytes come from
    /// `seed` (a decoder turns them into noise), with granule positions for `seconds`.
    public static func opus(seconds: Double = 0.5, seed: UInt64 = 0) -> Data {
        var head = Data("OpusHead".utf8)
        head.append(contentsOf: [1, 2])  // version, channels
        head.append(contentsOf: [0x38, 0x01])  // pre-skip 312
        withUnsafeBytes(of: UInt32(48_000).littleEndian) { head.append(contentsOf: $0) }
        head.append(contentsOf: [0, 0, 0])  // gain, mapping family
        var tags = Data("OpusTags".utf8)
        let vendor = Data("shelf-test".utf8)
        withUnsafeBytes(of: UInt32(vendor.count).littleEndian) { tags.append(contentsOf: $0) }
        tags.append(vendor)
        withUnsafeBytes(of: UInt32(0).littleEndian) { tags.append(contentsOf: $0) }
        var writer = OggWriter(serial: UInt32(truncatingIfNeeded: seed &+ 0x5EED))
        writer.page([head], granule: 0, first: true)
        writer.page([tags], granule: 0)
        var random = SeededRandom(seed: seed &+ 3)
        let packets = max(1, Int(seconds / 0.02))
        var granule: UInt64 = 312
        var batch: [Data] = []
        for index in 0..<packets {
            var packet = Data([0xFC])  // CELT-only fullband 20 ms, stereo, one frame
            packet.append(contentsOf: (0..<60).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            batch.append(packet)
            granule += 960
            if batch.count == 25 || index == packets - 1 {
                writer.page(batch, granule: granule, last: index == packets - 1)
                batch = []
            }
        }
        return writer.data
    }

    static func crc8(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }

    static func crc16(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        }
        return crc
    }
}

/// Big-endian bit packing for FLAC.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var current: UInt8 = 0
    private var used = 0

    mutating func write(_ value: UInt64, _ count: Int) {
        for bit in stride(from: count - 1, through: 0, by: -1) {
            current = current << 1 | UInt8((value >> UInt64(bit)) & 1)
            used += 1
            if used == 8 {
                bytes.append(current)
                current = 0
                used = 0
            }
        }
    }

    mutating func align() {
        if used > 0 { write(0, 8 - used) }
    }

    /// FLAC's UTF-8-like coding of frame numbers: one byte below 0x80, else a lead byte with k
    /// high bits set and 7 - k value bits, then k - 1 continuation bytes of 6 bits each.
    mutating func writeUTF8(_ value: UInt64) {
        if value < 0x80 {
            write(value, 8)
            return
        }
        var count = 2
        while count < 7 && value >= 1 << UInt64(6 * (count - 1) + (7 - count)) { count += 1 }
        let lead = (UInt64(0xFF) << UInt64(8 - count)) & 0xFF
        write(lead | (value >> UInt64(6 * (count - 1))), 8)
        for index in stride(from: count - 2, through: 0, by: -1) { write(0x80 | ((value >> UInt64(6 * index)) & 0x3F), 8) }
    }
}

/// Ogg pages with their CRC.
struct OggWriter {
    let serial: UInt32
    private(set) var data = Data()
    private var sequence: UInt32 = 0

    init(serial: UInt32) { self.serial = serial }

    mutating func page(_ packets: [Data], granule: UInt64, first: Bool = false, last: Bool = false) {
        var lacing: [UInt8] = []
        var body = Data()
        for packet in packets {
            var length = packet.count
            while length >= 255 {
                lacing.append(255)
                length -= 255
            }
            lacing.append(UInt8(length))
            body.append(packet)
        }
        var page = Data("OggS".utf8)
        page.append(0)
        page.append((first ? 0x02 : 0) | (last ? 0x04 : 0))
        withUnsafeBytes(of: granule.littleEndian) { page.append(contentsOf: $0) }
        withUnsafeBytes(of: serial.littleEndian) { page.append(contentsOf: $0) }
        withUnsafeBytes(of: sequence.littleEndian) { page.append(contentsOf: $0) }
        page.append(contentsOf: [0, 0, 0, 0])
        page.append(UInt8(lacing.count))
        page.append(contentsOf: lacing)
        page.append(body)
        let crc = Self.crc(page)
        withUnsafeBytes(of: crc.littleEndian) { page.replaceSubrange(22..<26, with: $0) }
        data.append(page)
        sequence += 1
    }

    static func crc(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0
        for byte in data {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}

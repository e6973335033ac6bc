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

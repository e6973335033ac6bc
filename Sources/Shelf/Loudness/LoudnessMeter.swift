import CEBUR128
import Foundation
import ShelfCore

/// Part of a file to measure (a CUE sheet track is a slice of an image): nil start/end = whole file.
public struct LoudnessInput: Sendable, Equatable {
    /// The audio file.
    public var url: URL
    /// Where the slice starts, in seconds from the file's start; nil = the file's start.
    public var start: Double?
    /// Where the slice ends, in seconds from the file's start (not a duration); nil = the file's end.
    public var end: Double?

    /// The slice of `url` from `start` to `end` (seconds), the whole file by default.
    public init(url: URL, start: Double? = nil, end: Double? = nil) {
        self.url = url
        self.start = start
        self.end = end
    }
}

/// One EBU R128 measurement of a track or an album.
public struct LoudnessMeasurement: Sendable, Codable, Equatable {
    /// Integrated loudness in LUFS, or nil for silence: when no 400 ms block passes the −70 LUFS
    /// absolute gate the loudness is −∞, which JSON cannot carry and which has no gain to apply.
    public var integrated: Double?
    /// True peak as a linear amplitude (1.0 = full scale), the largest of all channels' (LFE included).
    public var truePeak: Double

    /// A measurement of `integrated` LUFS (nil for silence) and a linear `truePeak`.
    public init(integrated: Double?, truePeak: Double) {
        self.integrated = integrated
        self.truePeak = truePeak
    }

    /// The true peak in dBTP (−∞ for digital silence).
    public var truePeakDB: Double { 20 * log10(truePeak) }

    /// ReplayGain 2.0 gain against the −18 LUFS reference, in dB; nil for silence.
    public var replayGain: Double? { integrated.map { -18 - $0 } }
}

/// Why a file could not be measured; reads "PATH: reason".
public struct LoudnessError: ClassifiedError, Equatable {
    /// A file ffmpeg cannot decode (ffmpeg missing is a `ToolError`).
    public var kind: ErrorKind { .invalid }
    /// "loudnessFailed".
    public var errorCode: String { "loudnessFailed" }
    /// The file measured.
    public let path: String
    /// The reason in words, without the path.
    public let reason: String

    /// An error about `path`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// "PATH: reason".
    public var description: String { "\(path): \(reason)" }
}

/// Measures EBU R128 integrated loudness (libebur128) and true peak (libebur128's definition) of
/// audio that ffmpeg decodes to 32-bit float, per track and per album.
///
/// The calls block while ffmpeg decodes (1 to 2 s for a 10-minute CD-quality track): run them on
/// a thread of their own, not on Swift's cooperative pool.
public struct LoudnessMeter: Sendable {
    /// The ffmpeg run: a path, or a name looked up on PATH.
    public let ffmpeg: String
    /// The niceness ffmpeg runs at (through /usr/bin/nice), so that a background scan leaves the
    /// cores to playback and requests; nil = the caller's.
    public let niceness: Int32?

    /// A meter running `ffmpeg` (a path, or a name found on PATH), at `niceness` if given.
    public init(ffmpeg: String = "ffmpeg", niceness: Int32? = nil) {
        self.ffmpeg = ffmpeg
        self.niceness = niceness
    }

    /// Measures each input and the album they make: the album's loudness is gated over all the
    /// tracks' blocks together (as if played in one go), not the mean of the tracks' values, and
    /// its peak is the largest track peak. An input ffmpeg cannot decode is that track's failure
    /// and is left out of the album; the album is nil only when no track could be measured.
    /// Throws `CancellationError` once `isCancelled` answers true (checked between reads and
    /// every quarter second), and `ToolError` when ffmpeg cannot be found.
    public func measure(
        _ inputs: [LoudnessInput], isCancelled: @Sendable () -> Bool = { false }
    ) throws -> (tracks: [Result<LoudnessMeasurement, LoudnessError>], album: LoudnessMeasurement?) {
        let command = try launchCommand()
        // Every track's state lives until the album is gated over all of them; the class frees
        // each one however this function ends.
        var states: [MeterState] = []
        var tracks: [Result<LoudnessMeasurement, LoudnessError>] = []
        for input in inputs {
            if isCancelled() { throw CancellationError() }
            switch try Self.decode(input, command: command, isCancelled: isCancelled) {
            case .success(let state):
                states.append(state)
                tracks.append(.success(state.measurement(integrated: state.integrated())))
            case .failure(let error):
                tracks.append(.failure(error))
            }
        }
        guard !states.isEmpty else { return (tracks, nil) }
        var pointers: [UnsafeMutablePointer<ebur128_state>?] = states.map(\.pointer)
        var loudness = -Double.infinity
        let status = pointers.withUnsafeMutableBufferPointer { ebur128_loudness_global_multiple($0.baseAddress, $0.count, &loudness) }
        let peak = states.map(\.truePeak).max() ?? 0
        return (tracks, LoudnessMeasurement(integrated: status == 0 ? MeterState.finite(loudness) : nil, truePeak: peak))
    }

    /// Measures one input alone. Throws `LoudnessError` when it cannot be decoded (or ffmpeg is
    /// missing) and `CancellationError` once `isCancelled` answers true.
    public func measure(_ input: LoudnessInput, isCancelled: @Sendable () -> Bool = { false }) throws -> LoudnessMeasurement {
        let state = try Self.decode(input, command: launchCommand(), isCancelled: isCancelled).get()
        return state.measurement(integrated: state.integrated())
    }

    // MARK: - Running ffmpeg

    /// The executable and leading arguments that start ffmpeg: ffmpeg itself, or nice running it
    /// (Process cannot lower a child's priority between fork and exec).
    private func launchCommand() throws(ToolError) -> [String] {
        let path = try ProgramRunner.locate(.ffmpeg, path: ffmpeg.contains("/") ? ffmpeg : nil)
        if let niceness, let nice = try? ProgramRunner.locate(.nice) { return [nice, "-n", String(niceness), path] }
        return [path]
    }

    /// ffmpeg's arguments decoding the first audio stream of `input` to float WAV on stdout.
    /// WAV rather than raw f32le because its header states the rate, channel count and channel
    /// mask of exactly what ffmpeg emits, which saves running ffprobe first and cannot disagree
    /// with the decoder. `-ss`/`-to` are input options: ffmpeg seeks, then drops samples up to
    /// the start, so a slice is sample-exact without decoding the file from its beginning.
    static func arguments(for input: LoudnessInput) -> [String] {
        var arguments = ["-nostdin", "-hide_banner", "-v", "error"]
        if let start = input.start, start > 0 { arguments += ["-ss", String(format: "%.6f", start)] }
        if let end = input.end { arguments += ["-to", String(format: "%.6f", end)] }
        // "file:" keeps a path with a colon or a leading dash from being read as a protocol or an option.
        arguments += ["-i", "file:" + input.url.path, "-map", "0:a:0", "-vn", "-sn", "-dn", "-map_metadata", "-1"]
        arguments += ["-fflags", "+bitexact", "-f", "wav", "-acodec", "pcm_f32le", "pipe:1"]
        return arguments
    }

    /// Decodes `input` through ffmpeg into a new libebur128 state. A file ffmpeg cannot decode is
    /// a `.failure`; only cancellation throws. ffmpeg is killed (if still running) and reaped on
    /// every path, and its stderr is read alongside stdout so it can never block on a full pipe.
    private static func decode(
        _ input: LoudnessInput, command: [String], isCancelled: () -> Bool
    ) throws -> Result<MeterState, LoudnessError> {
        let path = input.url.path
        func failure(_ reason: String) -> Result<MeterState, LoudnessError> { .failure(LoudnessError(path: path, reason: reason)) }
        if let start = input.start, let end = input.end, end <= start {
            return failure("the slice ends (\(end) s) before it starts (\(start) s)")
        }
        let process: RunningProgram
        do {
            process = try ProgramRunner.start(command[0], Array(command.dropFirst()) + arguments(for: input), output: .pipe, errors: .pipe)
        } catch {
            return failure(error.description)
        }
        defer { process.finish() }
        let reader = WAVReader()
        var tail = StderrTail()
        var descriptors = [
            pollfd(fd: process.outputDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
            pollfd(fd: process.errorDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        // Until both pipes reach end of file; poll skips a negative descriptor, which marks one done.
        while descriptors.contains(where: { $0.fd >= 0 }) {
            if isCancelled() { throw CancellationError() }
            // A timeout, so that cancelling is noticed even while ffmpeg waits on a slow disk.
            let ready = poll(&descriptors, nfds_t(descriptors.count), 250)
            if ready < 0, errno != EINTR { return failure("cannot wait for ffmpeg: \(String(cString: strerror(errno)))") }
            if ready <= 0 { continue }
            if descriptors[1].fd >= 0, descriptors[1].revents != 0, !tail.take(from: descriptors[1].fd) { descriptors[1].fd = -1 }
            if descriptors[0].fd >= 0, descriptors[0].revents != 0 {
                switch reader.take(from: descriptors[0].fd) {
                case .more: break
                case .end: descriptors[0].fd = -1
                case .invalid(let reason):
                    // Nothing more is wanted from ffmpeg; stop it before it decodes the rest.
                    process.kill()
                    return failure(reason)
                }
            }
        }
        let (status, signalled) = process.wait()
        guard !signalled, status == 0 else {
            // ffmpeg names the input first ("file:PATH: Invalid data…"); the error names it already.
            let line = tail.lastLine.map { $0.hasPrefix("file:\(path): ") ? String($0.dropFirst(path.count + 7)) : $0 }
            let why = line ?? (signalled ? "killed by signal \(status)" : "exit status \(status)")
            return failure("ffmpeg cannot decode it: \(why)")
        }
        guard let state = reader.state, reader.frames > 0 else {
            return failure(reader.state == nil ? "ffmpeg wrote no WAV header" : "ffmpeg decoded no audio from it")
        }
        return .success(state)
    }
}

/// One track's meters: a libebur128 state for integrated loudness, freed when the last reference
/// goes so that no early return or thrown error can leak it, and a true-peak meter. Not Sendable:
/// it never leaves the meter.
private final class MeterState {
    /// The C state; valid until deinit.
    let pointer: UnsafeMutablePointer<ebur128_state>
    /// The true peak, measured beside libebur128 rather than by it (see `TruePeakMeter`).
    private var peaks: TruePeakMeter

    /// A state for `channels` channels at `rate` Hz, with channel weights from a WAV channel
    /// `mask`; nil when libebur128 refuses the format.
    init?(channels: Int, rate: Int, mask: UInt32) {
        // No EBUR128_MODE_HISTOGRAM: the histogram rounds block loudness to 0.1 LU steps, and
        // keeping every block (8 bytes per 100 ms) costs almost nothing.
        let mode = Int32(EBUR128_MODE_I.rawValue)
        guard channels > 0, rate > 0, let pointer = ebur128_init(UInt32(channels), UInt(rate), mode) else { return nil }
        self.pointer = pointer
        peaks = TruePeakMeter(channels: channels, rate: rate)
        if let map = Self.channelMap(mask: mask, channels: channels) {
            for (index, type) in map.enumerated() { ebur128_set_channel(pointer, UInt32(index), Int32(type.rawValue)) }
        }
    }

    deinit {
        var pointer: UnsafeMutablePointer<ebur128_state>? = pointer
        ebur128_destroy(&pointer)
    }

    /// Measures `frames` interleaved frames; libebur128's status (0 = success).
    func add(_ samples: UnsafePointer<Float>, frames: Int) -> Int32 {
        peaks.add(samples, frames: frames)
        return ebur128_add_frames_float(pointer, samples, frames)
    }

    /// The largest true peak over all channels (linear).
    var truePeak: Double { Double(peaks.peak) }

    /// This state's integrated loudness, nil for silence.
    func integrated() -> Double? {
        var loudness = -Double.infinity
        return ebur128_loudness_global(pointer, &loudness) == 0 ? Self.finite(loudness) : nil
    }

    /// The measurement of this state with `integrated` loudness.
    func measurement(integrated: Double?) -> LoudnessMeasurement { LoudnessMeasurement(integrated: integrated, truePeak: truePeak) }

    /// `value` unless it is libebur128's −HUGE_VAL for "nothing above the gates".
    static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }

    /// libebur128's channel types for the channels of a WAV mask (which is also ffmpeg's channel
    /// order): LFE is left out and side and back channels get BS.1770's 1.41 weight; nil when the
    /// mask does not name every channel, leaving libebur128's default (L R C LFE Ls Rs), which is
    /// also ffmpeg's order for an unlabelled 5.1.
    static func channelMap(mask: UInt32, channels: Int) -> [channel]? {
        guard mask.nonzeroBitCount == channels else { return nil }
        // Bit order of WAVE_FORMAT_EXTENSIBLE's dwChannelMask: FL FR FC LFE BL BR FLC FRC BC SL SR
        // TC TFL TFC TFR TBL TBC TBR. Elevated channels weigh 1.0 under BS.1770-4 whatever their azimuth.
        let types: [channel] = [
            EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_UNUSED, EBUR128_Mp110, EBUR128_Mm110,
            EBUR128_Mp030, EBUR128_Mm030, EBUR128_Mp180, EBUR128_Mp090, EBUR128_Mm090,
            EBUR128_Tp000, EBUR128_Up030, EBUR128_Up000, EBUR128_Um030, EBUR128_Up135, EBUR128_Up180, EBUR128_Um135,
        ]
        var map: [channel] = []
        for bit in 0..<32 where mask & (1 << UInt32(bit)) != 0 {
            // A bit beyond the table is a channel BS.1770 gives no weight to; count it at 1.0.
            map.append(bit < types.count ? types[bit] : EBUR128_Mp000)
        }
        return map
    }
}

/// The last few KiB ffmpeg wrote to stderr: enough for its final error line, bounded however
/// much it complains about a damaged file.
private struct StderrTail {
    /// The kept bytes, at most `limit`.
    private var bytes: [UInt8] = []
    /// How much is kept.
    private let limit = 4096

    /// Reads what is waiting on `descriptor`; false at end of file (or on an error, which ends it too).
    mutating func take(from descriptor: Int32) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR || errno == EAGAIN { return true }
        guard count > 0 else { return false }
        bytes += chunk[0..<count]
        if bytes.count > limit { bytes.removeFirst(bytes.count - limit) }
        return true
    }

    /// The last non-empty line, trimmed; nil when ffmpeg said nothing.
    var lastLine: String? {
        String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.last { !$0.isEmpty }
    }
}

/// Reads ffmpeg's float WAV from a pipe in 64 KiB reads: parses the header, then feeds whole
/// frames to the track's meters, holding back the bytes of a frame split between two reads.
/// A class for its deinit, which frees the buffer.
private final class WAVReader {
    /// What one read came to.
    enum Step {
        /// Keep reading.
        case more
        /// End of file.
        case end
        /// The stream cannot be measured, for this reason.
        case invalid(String)
    }

    /// Bytes read and not yet consumed sit at the buffer's start; 16-byte aligned, so whole
    /// frames there can be handed to libebur128 as floats in place.
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: WAVReader.capacity, alignment: 16)
    /// How many bytes of `buffer` are filled.
    private var filled = 0
    /// The state, once the header has said what to create.
    private(set) var state: MeterState?
    /// Bytes per frame (channels × 4).
    private var frameSize = 0
    /// Frames fed so far.
    private(set) var frames = 0

    /// The most one read asks for: what a Linux pipe holds by default.
    private static let chunk = 64 * 1024
    /// The buffer's size: room for one read on top of a header or of a partial frame.
    private static let capacity = 2 * chunk

    deinit { buffer.deallocate() }

    /// Reads once from `descriptor` and consumes what it can.
    func take(from descriptor: Int32) -> Step {
        let count = read(descriptor, buffer.baseAddress! + filled, min(Self.chunk, Self.capacity - filled))
        if count < 0, errno == EINTR || errno == EAGAIN { return .more }
        if count < 0 { return .invalid("cannot read ffmpeg's output: \(String(cString: strerror(errno)))") }
        if count == 0 { return .end }
        filled += count
        if state == nil {
            switch parseHeader() {
            case .more: return filled == Self.capacity ? .invalid("ffmpeg's output has no WAV header") : .more
            case .invalid(let reason): return .invalid(reason)
            case .end: break
            }
        }
        let whole = filled / frameSize
        if whole > 0, let state {
            let status = state.add(buffer.baseAddress!.assumingMemoryBound(to: Float.self), frames: whole)
            if status != 0 { return .invalid("libebur128 failed (error \(status))") }
            frames += whole
            consume(whole * frameSize)
        }
        return .more
    }

    /// Parses the RIFF header at the buffer's start, creates the state and drops the header
    /// bytes: `.end` when done, `.more` when the header is not all there yet.
    private func parseHeader() -> Step {
        let bytes = UnsafeRawBufferPointer(buffer)
        func u16(_ at: Int) -> Int { Int(bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self).littleEndian) }
        func u32(_ at: Int) -> UInt32 { bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian }
        func tag(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
        guard filled >= 12 else { return .more }
        guard tag(0) == "RIFF", tag(8) == "WAVE" else { return .invalid("ffmpeg's output is not WAV") }
        var offset = 12
        var format: (channels: Int, rate: Int, mask: UInt32)?
        while true {
            guard filled >= offset + 8 else { return .more }
            let id = tag(offset)
            let size = Int(u32(offset + 4))
            if id == "data" {
                guard let format else { return .invalid("ffmpeg's WAV has no format before its data") }
                guard let state = MeterState(channels: format.channels, rate: format.rate, mask: format.mask) else {
                    return .invalid("libebur128 cannot measure \(format.channels) channels at \(format.rate) Hz")
                }
                self.state = state
                frameSize = format.channels * 4
                consume(offset + 8)
                return .end
            }
            // A pipe's WAV says 0xFFFFFFFF for the data's size, but every chunk before it is exact.
            guard size < Self.capacity else { return .invalid("ffmpeg's WAV header is malformed") }
            guard filled >= offset + 8 + size else { return .more }
            if id == "fmt " {
                guard size >= 16 else { return .invalid("ffmpeg's WAV format is malformed") }
                var code = u16(offset + 8)
                let bits = u16(offset + 22)
                var mask: UInt32 = 0
                // WAVE_FORMAT_EXTENSIBLE: the real format code starts the sub-format GUID.
                if code == 0xFFFE, size >= 40 {
                    mask = u32(offset + 28)
                    code = u16(offset + 32)
                }
                guard code == 3, bits == 32 else { return .invalid("ffmpeg did not write 32-bit float (format \(code), \(bits) bits)") }
                format = (u16(offset + 10), Int(u32(offset + 12)), mask)
            }
            offset += 8 + size + size % 2
        }
    }

    /// Drops the first `count` bytes, moving the rest (a partial frame, or audio after the
    /// header) to the buffer's aligned start.
    private func consume(_ count: Int) {
        let rest = filled - count
        if rest > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + count, byteCount: rest) }
        filled = rest
    }
}

/// True peak as libebur128 1.2 measures it (its 49-tap Hann-windowed sinc interpolator, ×4 below
/// 96 kHz, ×2 below 192 kHz, the sample peak above), computed here because in libebur128 it took
/// 70% of a scan: here the taps run vectorised over a block at a time, and a block too quiet for
/// any interpolated sample to pass the peak found so far is skipped. The short filter reads
/// full-band content near Nyquist low (0.8 dB under ffmpeg's 192 kHz resampling on white noise),
/// but it is what BS.1770 describes and what libebur128-based ReplayGain taggers write.
private struct TruePeakMeter {
    /// Each interpolated phase's taps: its coefficients and how many samples back each reaches.
    private let phases: [(coefficients: [Float], back: [Int])]
    /// The furthest back any tap reaches: the history kept between calls.
    private let history: Int
    /// The largest sum of a phase's absolute coefficients: no interpolated sample can exceed the
    /// largest input magnitude under its taps times this.
    private let gain: Float
    /// How many channels are interleaved.
    private let channels: Int
    /// Per channel, the last `history` samples (zeros at first, like libebur128's delay line).
    private var tails: [[Float]]
    /// The largest magnitude so far, input samples and interpolated ones, over all channels.
    private(set) var peak: Float = 0
    /// Scratch: one channel's history followed by its new samples.
    private var window: [Float] = []
    /// Scratch: one phase's interpolated block.
    private var block: [Float] = []

    /// How many frames share one decision to skip: long enough for the vector loops, short
    /// enough that a loud moment does not force the interpolation of much quiet around it.
    private static let blockFrames = 1024

    /// A meter for `channels` channels at `rate` Hz.
    init(channels: Int, rate: Int) {
        let factor = rate < 96000 ? 4 : rate < 192000 ? 2 : 1
        let taps = 49
        // None at all from 192 kHz: libebur128 takes the sample peak as the true peak there.
        var phases = [(coefficients: [Float], back: [Int])](repeating: ([], []), count: factor > 1 ? factor : 0)
        // libebur128's interp_create: the same coefficients, dropping the same near-zero ones.
        for j in 0..<(factor > 1 ? taps : 0) {
            let m = Double(j) - Double(taps - 1) / 2
            var c = abs(m) > 0.000001 ? sin(m * .pi / Double(factor)) / (m * .pi / Double(factor)) : 1
            c *= 0.5 * (1 - cos(2 * .pi * Double(j) / Double(taps - 1)))
            if abs(c) > 0.000001 {
                phases[j % factor].coefficients.append(Float(c))
                phases[j % factor].back.append(j / factor)
            }
        }
        self.phases = phases
        history = phases.flatMap(\.back).max() ?? 0
        gain = phases.map { $0.coefficients.reduce(0) { $0 + abs($1) } }.max() ?? 0
        self.channels = channels
        tails = Array(repeating: Array(repeating: 0, count: history), count: channels)
    }

    /// Measures `frames` interleaved frames.
    mutating func add(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        // Reused from call to call; every element is written before it is read.
        if window.count != history + frames { window = Array(repeating: 0, count: history + frames) }
        if block.isEmpty { block = Array(repeating: 0, count: Self.blockFrames) }
        for channel in 0..<channels {
            var peak = self.peak
            window.withUnsafeMutableBufferPointer { window in
                for (index, sample) in tails[channel].enumerated() { window[index] = sample }
                for frame in 0..<frames {
                    let sample = samples[frame * channels + channel]
                    window[history + frame] = sample
                    // The input samples themselves, libebur128's sample peak: the taps end `history`
                    // samples short of the last ones.
                    peak = max(peak, abs(sample))
                }
                block.withUnsafeMutableBufferPointer { block in
                    for start in stride(from: 0, to: frames, by: Self.blockFrames) {
                        let count = min(Self.blockFrames, frames - start)
                        var loudest: Float = 0
                        for sample in window[start..<start + count + history] { loudest = max(loudest, abs(sample)) }
                        if loudest * gain <= peak { continue }
                        for phase in phases {
                            for index in 0..<count { block[index] = 0 }
                            for (coefficient, back) in zip(phase.coefficients, phase.back) {
                                let source = window.baseAddress! + history + start - back
                                for index in 0..<count { block[index] += coefficient * source[index] }
                            }
                            for index in 0..<count { peak = max(peak, abs(block[index])) }
                        }
                    }
                }
                for index in 0..<history { tails[channel][index] = window[frames + index] }
            }
            self.peak = peak
        }
    }
}

import CCrypto
import Foundation

/// A hash of a file's audio payload that leaves its tags out, so that retagging a file keeps its
/// identity and a moved or renamed copy is recognised.
///
/// The payload by format: WAV (RIFF, RF64, BW64) `data` chunk, its size from `ds64` when the
/// 32-bit one overflowed, to the end of the file when a streaming writer left it 0; AIFF `SSND`
/// chunk; FLAC the STREAMINFO MD5 of the decoded audio when the encoder set it, else everything
/// after the metadata blocks; MP3, ADTS AAC, TrueAudio (and WavPack, Monkey's Audio, MPC) the file
/// without a leading ID3v2 tag and without trailing APEv2/ID3v1 tags; MP4/M4A the `mdat` box,
/// whatever its codec; Ogg (Vorbis, Opus, FLAC, Speex) the bodies of the first audio stream's
/// pages after its header pages (audio always starts on a fresh page, and the comment packet,
/// which a retag rewrites and may lengthen, lives in the header pages; other multiplexed streams
/// are left out, so their interleaving does not matter); Matroska the bodies of the Clusters
/// (tags, attachments and cues live outside them); DSF the `data` chunk (its ID3v2 tag follows
/// it); DSDIFF the `DSD ` or `DST ` chunk; tracker modules the file without its song-title field
/// (the only tag a module has; its patterns and samples are the audio). ASF/WMA and unknown
/// layouts: the whole file — a retag then changes the identity, which only costs a missed move
/// detection.
///
/// Sampling: a payload of at most 1 MiB is hashed whole. A larger one is hashed as its length
/// (8 bytes, big-endian) followed by three 64 KiB windows: at its start, centred on its middle,
/// and ending at its end. Reading three windows costs the same for a 3 MB MP3 and a 3 GB WAV.
public enum AudioIdentity {
    /// Payloads up to this size are hashed whole.
    public static let wholeLimit = 1 << 20
    /// The size of each sampled window.
    public static let window = 64 << 10

    /// The identity of the file at `url`: "v1:" and 64 hex digits (or "flac-md5:" and 32).
    public static func of(_ url: URL) throws -> String { try identities(url).current }

    /// The identity of the file at `url`, and for an Ogg file whose header spans pages the one it
    /// had before those pages were told from audio (a comment packet holding a picture was
    /// hashed as audio; nil when the two agree). An import looks a file up by the older one when
    /// the current matches nothing, so a file imported before the change and moved since is still
    /// recognised as the track it was.
    public static func identities(_ url: URL) throws -> (current: String, legacy: String?) {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let size = Int64(try handle.seekToEnd())
        func read(_ offset: Int64, _ count: Int) throws -> Data {
            guard count > 0, offset >= 0, offset < size else { return Data() }
            try handle.seek(toOffset: UInt64(offset))
            return try handle.read(upToCount: count) ?? Data()
        }
        let head = try read(0, 64)
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            head.count >= offset + text.utf8.count && head.dropFirst(offset).starts(with: Array(text.utf8))
        }
        let region: Payload
        if (starts("RIFF") || starts("RF64") || starts("BW64")) && starts("WAVE", at: 8) {
            region = try AudioLayout.wave(size: size, read: read)?.data.map { .range($0.start, $0.end) } ?? .range(0, size)
        } else if starts("FORM"), head.count >= 12 {
            region = try chunk(named: "SSND", littleEndian: false, start: 12, size: size, read: read) ?? .range(0, size)
        } else if starts("ftyp", at: 4) {
            region = try box(named: "mdat", size: size, read: read) ?? .range(0, size)
        } else if starts("OggS") {
            return try oggIdentities(size: size, read: read)
        } else if head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) {
            let clusters = try AudioLayout.matroskaSegmentChildren(size: size, read: read)
                .filter { $0.id == AudioLayout.clusterID }.map { ($0.start, $0.end) }
            return (try clusters.isEmpty ? sampled(start: 0, end: size, read: read) : sampled(ranges: clusters, read: read), nil)
        } else if starts("DSD ") && starts("fmt ", at: 28) {
            region = try dsfData(size: size, read: read) ?? .range(0, size)
        } else if starts("FRM8") && starts("DSD ", at: 12) {
            region = try dffSound(size: size, read: read) ?? .range(0, size)
        } else if let title = try moduleTitle(head: head, size: size, read: read) {
            return (try sampled(ranges: [(0, title.lowerBound), (title.upperBound, size)], read: read), nil)
        } else {
            let start = try id3v2Length(read(0, 10))
            if try read(start, 4).starts(with: Array("fLaC".utf8)) {
                region = try flac(start: start + 4, size: size, read: read)
            } else {
                region = .range(start, try endWithoutTrailingTags(size: size, read: read))
            }
        }
        switch region {
        case .md5(let digest): return ("flac-md5:" + hex(digest), nil)
        case .range(let start, let end): return (try sampled(start: start, end: max(start, end), read: read), nil)
        }
    }

    enum Payload {
        case range(Int64, Int64)
        case md5(Data)
    }

    static func sampled(start: Int64, end: Int64, read: (Int64, Int) throws -> Data) throws -> String {
        let length = end - start
        let hasher = SHA256Hasher()
        if length <= Int64(wholeLimit) {
            var offset = start
            while offset < end {
                let part = try read(offset, Int(min(Int64(wholeLimit), end - offset)))
                if part.isEmpty { break }
                hasher.update(part)
                offset += Int64(part.count)
            }
        } else {
            withUnsafeBytes(of: UInt64(length).bigEndian) { hasher.update(Data($0)) }
            hasher.update(try read(start, window))
            hasher.update(try read(start + length / 2 - Int64(window / 2), window))
            hasher.update(try read(end - Int64(window), window))
        }
        return "v1:" + hex(hasher.finish())
    }

    /// The byte ranges, concatenated, sampled as one payload: the same digest as one range
    /// holding the same bytes.
    static func sampled(ranges: [(Int64, Int64)], read: (Int64, Int) throws -> Data) throws -> String {
        let ranges = ranges.filter { $0.1 > $0.0 }
        let total = ranges.reduce(Int64(0)) { $0 + $1.1 - $1.0 }
        func readPayload(_ position: Int64, _ count: Int) throws -> Data {
            var result = Data()
            var position = position
            for (start, end) in ranges where result.count < count {
                let length = end - start
                if position >= length {
                    position -= length
                    continue
                }
                result.append(try read(start + position, Int(min(Int64(count - result.count), length - position))))
                position = 0
            }
            return result
        }
        return try sampled(start: 0, end: total, read: readPayload)
    }

    /// DSF: the samples of the `data` chunk (chunk sizes are 64-bit and count their 12-byte header).
    static func dsfData(size: Int64, read: (Int64, Int) throws -> Data) throws -> Payload? {
        var offset: Int64 = 0
        while offset + 12 <= size {
            let header = [UInt8](try read(offset, 12))
            guard header.count == 12 else { return nil }
            let length = AudioLayout.integer(header[4..<12], littleEndian: true)
            if header[0..<4].elementsEqual(Array("data".utf8)) { return .range(offset + 12, past(offset, max(12, length), within: size)) }
            guard length >= 12 else { return nil }
            offset = past(offset, length, within: size)
        }
        return nil
    }

    /// DSDIFF: the body of the `DSD ` (or compressed `DST `) chunk inside `FRM8`; chunk sizes are
    /// 64-bit big-endian, exclude the header and are padded to even.
    static func dffSound(size: Int64, read: (Int64, Int) throws -> Data) throws -> Payload? {
        var offset: Int64 = 16
        while offset + 12 <= size {
            let header = [UInt8](try read(offset, 12))
            guard header.count == 12 else { return nil }
            let name = String(decoding: header[0..<4], as: UTF8.self)
            let length = AudioLayout.integer(header[4..<12], littleEndian: false)
            guard length >= 0 else { return nil }
            if name == "DSD " || name == "DST " { return .range(offset + 12, past(offset + 12, length, within: size)) }
            offset = past(past(offset + 12, length, within: size), length & 1, within: size)
        }
        return nil
    }

    /// The song-title field of a tracker module, the one part of it a retag changes.
    static func moduleTitle(head: Data, size: Int64, read: (Int64, Int) throws -> Data) throws -> Range<Int64>? {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            head.count >= offset + text.utf8.count && head.dropFirst(offset).starts(with: Array(text.utf8))
        }
        if starts("Extended Module: ") { return 17..<37 }
        if starts("IMPM") { return 4..<30 }
        if starts("SCRM", at: 44) { return 0..<28 }
        if size > 1084, AudioLayout.modSignatures.contains(String(decoding: try read(1080, 4), as: UTF8.self)) { return 0..<20 }
        return nil
    }

    /// RIFF or IFF chunks after `start`: the byte range of the named one.
    static func chunk(named name: String, littleEndian: Bool, start: Int64, size: Int64, read: (Int64, Int) throws -> Data) throws -> Payload? {
        var offset = start
        while offset + 8 <= size {
            let header = try read(offset, 8)
            guard header.count == 8 else { return nil }
            let bytes = [UInt8](header[header.startIndex + 4..<header.startIndex + 8])
            let length =
                littleEndian
                ? Int64(bytes[0]) | Int64(bytes[1]) << 8 | Int64(bytes[2]) << 16 | Int64(bytes[3]) << 24
                : Int64(bytes[3]) | Int64(bytes[2]) << 8 | Int64(bytes[1]) << 16 | Int64(bytes[0]) << 24
            if header.prefix(4).elementsEqual(Array(name.utf8)) { return .range(offset + 8, min(size, offset + 8 + length)) }
            offset += 8 + length + (length & 1)
        }
        return nil
    }

    /// Top-level MP4 boxes: the byte range of the named one (64-bit sizes and "to the end" included).
    static func box(named name: String, size: Int64, read: (Int64, Int) throws -> Data) throws -> Payload? {
        var offset: Int64 = 0
        while offset + 8 <= size {
            let header = [UInt8](try read(offset, 16))
            guard header.count >= 8 else { return nil }
            var length = Int64(header[0]) << 24 | Int64(header[1]) << 16 | Int64(header[2]) << 8 | Int64(header[3])
            var headerLength: Int64 = 8
            if length == 1, header.count == 16 {
                length = header[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }
                headerLength = 16
            } else if length == 0 {
                length = size - offset
            }
            guard length >= headerLength else { return nil }
            if header[4..<8].elementsEqual(Array(name.utf8)) { return .range(offset + headerLength, past(offset, length, within: size)) }
            offset = past(offset, length, within: size)
        }
        return nil
    }

    /// `offset + length`, but no further than `size`: a box or chunk may claim 64-bit lengths up to
    /// 2⁶³ − 1, which overflowed the sum and trapped (shelf-fuzz, identity target). `offset` is at
    /// most `size` and `length` at least zero.
    static func past(_ offset: Int64, _ length: Int64, within size: Int64) -> Int64 {
        length > size - offset ? size : offset + length
    }

    /// The length of an ID3v2 tag at the start (0 when there is none).
    static func id3v2Length(_ header: Data) -> Int64 {
        let bytes = [UInt8](header)
        guard bytes.count == 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 else { return 0 }
        let size = bytes[6..<10].reduce(Int64(0)) { $0 << 7 | Int64($1 & 0x7F) }
        return 10 + size + (bytes[5] & 0x10 != 0 ? 10 : 0)
    }

    /// The end of the audio once an ID3v1 tag and an APEv2 tag (in either order) are cut off.
    static func endWithoutTrailingTags(size: Int64, read: (Int64, Int) throws -> Data) throws -> Int64 {
        var end = size
        for _ in 0..<2 {
            if end >= 128, try read(end - 128, 3).elementsEqual(Array("TAG".utf8)) {
                end -= 128
                continue
            }
            if end >= 32 {
                let footer = [UInt8](try read(end - 32, 32))
                if footer.count == 32, footer[0..<8].elementsEqual(Array("APETAGEX".utf8)) {
                    let tagSize = Int64(footer[12]) | Int64(footer[13]) << 8 | Int64(footer[14]) << 16 | Int64(footer[15]) << 24
                    let hasHeader = footer[23] & 0x80 != 0
                    end -= tagSize + (hasHeader ? 32 : 0)
                    continue
                }
            }
            break
        }
        return max(0, end)
    }

    /// FLAC: STREAMINFO's MD5 when set, else the frames after the last metadata block.
    static func flac(start: Int64, size: Int64, read: (Int64, Int) throws -> Data) throws -> Payload {
        var offset = start
        var md5: Data?
        while offset + 4 <= size {
            let header = [UInt8](try read(offset, 4))
            guard header.count == 4 else { break }
            let last = header[0] & 0x80 != 0
            let type = header[0] & 0x7F
            let length = Int64(header[1]) << 16 | Int64(header[2]) << 8 | Int64(header[3])
            if type == 0, length >= 34 {
                let digest = try read(offset + 4 + 18, 16)
                if digest.count == 16, digest.contains(where: { $0 != 0 }) { md5 = digest }
            }
            offset += 4 + length
            if last { break }
        }
        if let md5 { return .md5(md5) }
        return .range(offset, size)
    }

    /// Ogg: the page bodies of the first audio stream (by serial) after its header pages; a file
    /// with no recognised audio stream keeps every stream's pages. Header packets end on pages of
    /// granule 0, and a header spanning pages (a comment packet holding a picture) fills pages of
    /// granule -1 ("no packet ends here") before that: the audio starts at the first page with a
    /// real position, and a -1 page after it is audio. The legacy identity also counted those
    /// header pages as audio (nil when there are none).
    static func oggIdentities(size: Int64, read: (Int64, Int) throws -> Data) throws -> (current: String, legacy: String?) {
        // The walk reads a page header and its segment table per page (about a thousand pages in
        // a four-minute Opus file): through a 1 MiB buffer that is one read per MiB of file,
        // where reading each piece cost two system calls and two allocations, a fifth of an
        // import's time. The payload windows are read directly.
        var buffer = Data()
        var bufferStart: Int64 = 0
        func walkRead(_ offset: Int64, _ count: Int) throws -> Data {
            guard count > 0, offset >= 0, offset < size else { return Data() }
            if offset < bufferStart || offset + Int64(count) > bufferStart + Int64(buffer.count) {
                buffer = try read(offset, max(count, 1 << 20))
                bufferStart = offset
            }
            let low = buffer.startIndex + Int(offset - bufferStart)
            return buffer[low..<min(buffer.endIndex, low + count)]
        }
        let audio = try AudioLayout.oggAudioStream(size: size, read: walkRead)?.serial
        var ranges: [(Int64, Int64)] = []
        var legacyRanges: [(Int64, Int64)] = []
        var offset: Int64 = 0
        var inAudio = false
        while offset + 27 <= size {
            let header = [UInt8](try walkRead(offset, 27))
            guard header.count == 27, header[0..<4].elementsEqual(Array("OggS".utf8)) else { break }
            let granule = header[6..<14].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let serial = UInt32(AudioLayout.integer(header[14..<18], littleEndian: true))
            let segments = Int(header[26])
            let table = try walkRead(offset + 27, segments)
            let body = Int64(table.reduce(0) { $0 + Int($1) })
            let bodyStart = offset + 27 + Int64(segments)
            if granule != 0, audio == nil || serial == audio {
                if granule != UInt64.max { inAudio = true }
                if inAudio { ranges.append((bodyStart, bodyStart + body)) }
                legacyRanges.append((bodyStart, bodyStart + body))
            }
            offset = bodyStart + body
        }
        guard !ranges.isEmpty else {
            let whole = try sampled(start: 0, end: size, read: read)
            return (whole, legacyRanges.isEmpty ? nil : try sampled(ranges: legacyRanges, read: read))
        }
        let current = try sampled(ranges: ranges, read: read)
        return (current, legacyRanges.count == ranges.count ? nil : try sampled(ranges: legacyRanges, read: read))
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(data.count * 2)
        for byte in data {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Incremental SHA-256 over OpenSSL's EVP interface.
final class SHA256Hasher {
    private let context: OpaquePointer?

    init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ data: Data) {
        data.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    func finish() -> Data {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Data(digest.prefix(Int(length)))
    }
}

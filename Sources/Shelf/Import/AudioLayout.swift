import Foundation

/// Shelf's own look at the structure of a file TagLib 1.13 refused: which container it is and
/// that it holds an audio stream. Only a file this recognises is handed to ffprobe, so that noise
/// named `.flac` is reported as unreadable instead of imported from a lucky probe.
enum AudioLayout: Equatable, Sendable {
    /// An MP4 audio track, by its sample entry ("mp4a", "alac", "fLaC", "Opus", "ac-3", "ec-3").
    case mp4(sampleEntry: String)
    /// RIFF, RF64 or BW64 WAVE with a usable `fmt ` chunk followed by a `data` chunk.
    case wave
    /// Raw AAC in ADTS frames, after an optional ID3v2 tag.
    case adts
    /// Ogg, possibly with several multiplexed logical streams: the first audio one's codec and serial.
    case ogg(codec: String, serial: UInt32)
    /// Matroska (or WebM) with an audio track.
    case matroska
    /// TrueAudio ("TTA1"), after an optional ID3v2 tag.
    case trueAudio
    /// Sony's DSD Stream File.
    case dsf
    /// Philips' DSDIFF.
    case dff
    /// A tracker module: "mod", "xm", "s3m" or "it".
    case module(String)

    typealias Reader = (Int64, Int) throws -> Data

    /// Sample entries whose presence in an MP4 `stsd` box means an audio track.
    static let mp4AudioEntries: Set<String> = ["mp4a", "alac", "fLaC", "Opus", "ac-3", "ec-3"]
    /// The four-character tag at offset 1080 of a ProTracker-family module.
    static let modSignatures: Set<String> = [
        "M.K.", "M!K!", "M&K!", "N.T.", "FLT4", "FLT8", "CD81", "OKTA", "OCTA", "4CHN", "6CHN", "8CHN",
    ]

    /// Whether the file starts like a container TagLib 1.13 has no reader for (Matroska, DSF,
    /// DSDIFF). TagLib's content sniffing can still take one for another format (a Matroska
    /// file holding FLAC opens as a FLAC stream, its tags unseen), and writing through that
    /// misreading would damage the file: such files are read by ffprobe and never written.
    static func foreignToTagLib(_ url: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 32), head.count >= 16 else { return false }
        let bytes = [UInt8](head)
        if bytes.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return true }
        if bytes.starts(with: Array("DSD ".utf8)) { return bytes.count >= 32 && bytes[28..<32].elementsEqual(Array("fmt ".utf8)) }
        return bytes.starts(with: Array("FRM8".utf8)) && bytes[12..<16].elementsEqual(Array("DSD ".utf8))
    }

    /// The layout of the file at `url`, or nil when it is none of the above.
    static func detect(_ url: URL) throws -> AudioLayout? {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let size = Int64(try handle.seekToEnd())
        return try detect(size: size) { offset, count in
            guard count > 0, offset >= 0, offset < size else { return Data() }
            try handle.seek(toOffset: UInt64(offset))
            return try handle.read(upToCount: count) ?? Data()
        }
    }

    /// The layout of `size` bytes read through `read` (offset, count).
    static func detect(size: Int64, read: Reader) throws -> AudioLayout? {
        let head = [UInt8](try read(0, 64))
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let magic = Array(text.utf8)
            return head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
        }
        if (starts("RIFF") || starts("RF64") || starts("BW64")) && starts("WAVE", at: 8) {
            return try wave(size: size, read: read).flatMap { $0.format && $0.data != nil ? .wave : nil }
        }
        if starts("ftyp", at: 4) { return try mp4SampleEntry(size: size, read: read).map { .mp4(sampleEntry: $0) } }
        if starts("OggS") { return try oggAudioStream(size: size, read: read).map { .ogg(codec: $0.codec, serial: $0.serial) } }
        if head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return try matroskaHasAudio(size: size, read: read) ? .matroska : nil }
        if starts("DSD ") && starts("fmt ", at: 28) { return .dsf }
        if starts("FRM8") && starts("DSD ", at: 12) { return .dff }
        if starts("Extended Module: ") { return .module("xm") }
        if starts("IMPM") { return .module("it") }
        if starts("SCRM", at: 44) { return .module("s3m") }
        if size > 1084, modSignatures.contains(String(decoding: try read(1080, 4), as: UTF8.self)) { return .module("mod") }
        let start = AudioIdentity.id3v2Length(try read(0, 10))
        let afterTag = [UInt8](try read(start, 4))
        if afterTag.elementsEqual(Array("TTA1".utf8)) { return .trueAudio }
        if try isADTS(start: start, size: size, read: read) { return .adts }
        return nil
    }

    // MARK: WAVE

    /// What a WAVE file's chunks say: whether `fmt ` names channels and a rate, and the byte
    /// range of the `data` chunk's samples.
    struct Wave {
        var format = false
        var data: (start: Int64, end: Int64)?
    }

    /// Walks RIFF/RF64/BW64 chunks. RF64 and BW64 give the real `data` size in their `ds64`
    /// chunk (the 32-bit one is 0xFFFFFFFF); a streaming writer that never came back leaves
    /// `data` at 0 or 0xFFFFFFFF, and then the samples run to the end of the file.
    static func wave(size: Int64, read: Reader) throws -> Wave? {
        var result = Wave()
        var ds64Data: Int64?
        var offset: Int64 = 12
        while offset + 8 <= size {
            let header = [UInt8](try read(offset, 8))
            guard header.count == 8 else { break }
            let name = String(decoding: header[0..<4], as: UTF8.self)
            let length = integer(header[4..<8], littleEndian: true)
            let body = offset + 8
            switch name {
            case "ds64":
                let fields = [UInt8](try read(body, 16))
                if fields.count == 16 { ds64Data = integer(fields[8..<16], littleEndian: true) }
            case "fmt ":
                let fields = [UInt8](try read(body, 8))
                result.format =
                    fields.count == 8 && integer(fields[2..<4], littleEndian: true) > 0
                    && integer(fields[4..<8], littleEndian: true) > 0
            case "data":
                var end = body + length
                if length == 0xFFFF_FFFF, let ds64Data { end = body + ds64Data } else if length == 0 || length == 0xFFFF_FFFF { end = size }
                result.data = (body, min(size, end))
                return result
            default: break
            }
            guard length != 0xFFFF_FFFF else { break }
            offset = body + length + (length & 1)
        }
        return result
    }

    // MARK: MP4

    /// The first audio sample entry under `moov` (trak, mdia, minf, stbl, stsd), or nil.
    static func mp4SampleEntry(size: Int64, read: Reader) throws -> String? {
        guard case .range(let start, let end)? = try AudioIdentity.box(named: "moov", size: size, read: read),
            end > start, end - start <= 64 << 20
        else { return nil }
        return audioEntry(in: [UInt8](try read(start, Int(end - start)))[...])
    }

    private static func audioEntry(in bytes: ArraySlice<UInt8>) -> String? {
        var offset = bytes.startIndex
        while offset + 8 <= bytes.endIndex {
            var length = Int(integer(bytes[offset..<offset + 4], littleEndian: false))
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            var header = 8
            if length == 1, offset + 16 <= bytes.endIndex {
                length = Int(integer(bytes[offset + 8..<offset + 16], littleEndian: false))
                header = 16
            } else if length == 0 {
                length = bytes.endIndex - offset
            }
            guard length >= header, offset + length <= bytes.endIndex else { return nil }
            let body = bytes[offset + header..<offset + length]
            if ["trak", "mdia", "minf", "stbl"].contains(type), let found = audioEntry(in: body) { return found }
            if type == "stsd", body.count >= 16 {
                // Full box header (4), entry count (4), then entries as boxes.
                var entry = body.startIndex + 8
                while entry + 8 <= body.endIndex {
                    let entryLength = Int(integer(body[entry..<entry + 4], littleEndian: false))
                    let name = String(decoding: body[entry + 4..<entry + 8], as: UTF8.self)
                    if mp4AudioEntries.contains(name) { return name }
                    guard entryLength >= 8 else { break }
                    entry += entryLength
                }
            }
            offset += length
        }
        return nil
    }

    // MARK: ADTS

    /// ADTS: a sync word with layer 0 (MP3 frames have layer 1 to 3), a valid sampling index,
    /// and a second frame where the first one's length says, unless the first one ends the file.
    static func isADTS(start: Int64, size: Int64, read: Reader) throws -> Bool {
        var offset = start
        var frames = 0
        while frames < 3, offset + 7 <= size {
            let header = [UInt8](try read(offset, 7))
            guard header.count == 7, header[0] == 0xFF, header[1] & 0xF6 == 0xF0, (header[2] >> 2) & 0x0F < 13 else { break }
            let length = Int64(header[3] & 0x03) << 11 | Int64(header[4]) << 3 | Int64(header[5] >> 5)
            guard length >= 7 else { break }
            frames += 1
            offset += length
        }
        return frames >= 2 || (frames == 1 && offset >= size)
    }

    // MARK: Ogg

    /// The first logical stream whose beginning-of-stream page starts an audio codec's header
    /// (Vorbis, Opus, FLAC, Speex). BOS pages all come before any other page.
    static func oggAudioStream(size: Int64, read: Reader) throws -> (codec: String, serial: UInt32)? {
        var offset: Int64 = 0
        while offset + 27 <= size {
            let header = [UInt8](try read(offset, 27))
            guard header.count == 27, header[0..<4].elementsEqual(Array("OggS".utf8)), header[5] & 0x02 != 0 else { return nil }
            let serial = UInt32(integer(header[14..<18], littleEndian: true))
            let table = [UInt8](try read(offset + 27, Int(header[26])))
            let bodyStart = offset + 27 + Int64(table.count)
            let packet = [UInt8](try read(bodyStart, 8))
            if let codec = oggCodec(packet) { return (codec, serial) }
            offset = bodyStart + Int64(table.reduce(0) { $0 + Int($1) })
        }
        return nil
    }

    /// The audio codec whose identification header starts `packet`, or nil.
    static func oggCodec(_ packet: [UInt8]) -> String? {
        func starts(_ magic: [UInt8]) -> Bool { packet.count >= magic.count && Array(packet.prefix(magic.count)) == magic }
        if starts([0x01] + Array("vorbis".utf8)) { return "vorbis" }
        if starts(Array("OpusHead".utf8)) { return "opus" }
        if starts([0x7F] + Array("FLAC".utf8)) { return "flac" }
        if starts(Array("Speex   ".utf8)) { return "speex" }
        return nil
    }

    // MARK: Matroska

    static let ebmlHeaderID: UInt32 = 0x1A45_DFA3
    static let segmentID: UInt32 = 0x1853_8067
    static let clusterID: UInt32 = 0x1F43_B675
    static let tracksID: UInt32 = 0x1654_AE6B

    /// An EBML element's ID (length marker kept, as the specification writes IDs), its body's
    /// size (nil when "unknown", as live writers leave it) and the length of its header.
    static func ebmlElement(at offset: Int64, read: Reader) throws -> (id: UInt32, size: Int64?, header: Int64)? {
        let bytes = [UInt8](try read(offset, 12))
        guard let first = bytes.first, first != 0 else { return nil }
        let idLength = first.leadingZeroBitCount + 1
        guard idLength <= 4, bytes.count > idLength else { return nil }
        let id = bytes[0..<idLength].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let marker = bytes[idLength]
        guard marker != 0 else { return nil }
        let sizeLength = marker.leadingZeroBitCount + 1
        guard bytes.count >= idLength + sizeLength else { return nil }
        var value = Int64(marker & (0xFF >> sizeLength))
        for index in 1..<sizeLength { value = value << 8 | Int64(bytes[idLength + index]) }
        let unknown = value == (Int64(1) << (7 * sizeLength)) - 1
        return (id, unknown ? nil : value, Int64(idLength + sizeLength))
    }

    /// The children of the first Segment, each as (ID, body start, body end), until the first
    /// child of unknown size, which runs to the end of the segment.
    static func matroskaSegmentChildren(size: Int64, read: Reader) throws -> [(id: UInt32, start: Int64, end: Int64)] {
        guard let header = try ebmlElement(at: 0, read: read), header.id == ebmlHeaderID, let headerSize = header.size else { return [] }
        var offset = header.header + headerSize
        while let element = try ebmlElement(at: offset, read: read), element.id != segmentID {
            guard let length = element.size else { return [] }
            offset += element.header + length
        }
        guard let segment = try ebmlElement(at: offset, read: read), segment.id == segmentID else { return [] }
        let segmentEnd = segment.size.map { min(size, offset + segment.header + $0) } ?? size
        var children: [(id: UInt32, start: Int64, end: Int64)] = []
        var child = offset + segment.header
        while child < segmentEnd, let element = try ebmlElement(at: child, read: read) {
            let start = child + element.header
            guard let length = element.size else {
                children.append((element.id, start, segmentEnd))
                break
            }
            children.append((element.id, start, min(segmentEnd, start + length)))
            child = start + length
        }
        return children
    }

    /// Whether a Matroska file declares a track of type 2 (audio) in its Tracks element.
    static func matroskaHasAudio(size: Int64, read: Reader) throws -> Bool {
        for tracks in try matroskaSegmentChildren(size: size, read: read) where tracks.id == tracksID {
            var entry = tracks.start
            while entry < tracks.end, let element = try ebmlElement(at: entry, read: read), let length = element.size {
                let body = entry + element.header
                if element.id == 0xAE {  // TrackEntry
                    var field = body
                    while field < body + length, let item = try ebmlElement(at: field, read: read), let itemLength = item.size {
                        if item.id == 0x83, itemLength >= 1, itemLength <= 8 {  // TrackType
                            let value = [UInt8](try read(field + item.header, Int(itemLength))).reduce(0) { $0 << 8 | Int($1) }
                            if value == 2 { return true }
                        }
                        field += item.header + itemLength
                    }
                }
                entry = body + length
            }
        }
        return false
    }

    /// An unsigned integer from bytes in either order.
    static func integer(_ bytes: ArraySlice<UInt8>, littleEndian: Bool) -> Int64 {
        let ordered = littleEndian ? Array(bytes.reversed()) : Array(bytes)
        return ordered.reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }
}

import Foundation
import ShelfCore

/// A document that writes its own JSON, byte for byte what `Wire.encoder()` makes of it, so the hot
/// documents (track pages) skip JSONEncoder, which costs about 40 µs a track on Linux.
///
/// A conformance must list its keys in JSONEncoder's `.sortedKeys` order (plain UTF-8 byte order:
/// `"B" < "a"`, `"a10" < "a9"`) and write every value the way the type's `encode(to:)` does; a test
/// compares both encoders byte for byte, so a property added to the type and not here fails it.
public protocol FastJSONEncodable: Encodable {
    /// Appends this value as one JSON value.
    func writeJSON(to writer: inout JSONWriter)
}

/// Appends compact JSON as UTF-8 bytes, formatting every scalar exactly as Foundation's JSONEncoder
/// does with `[.sortedKeys, .withoutEscapingSlashes]` and `.iso8601` dates.
///
/// Commas are placed by the writer: a key or a value that follows a sibling gets one. Keys are
/// `StaticString`s written as they are, so they must be plain ASCII that needs no escaping.
public struct JSONWriter {
    /// The document so far.
    public private(set) var bytes: [UInt8]
    /// Set when a value could not be written as JSONEncoder would (a NaN or infinite double, which
    /// JSONEncoder refuses): the caller must discard `bytes` and use JSONEncoder to get its error.
    public private(set) var needsFallback = false
    /// Whether the next key or value follows a sibling in its container and needs a comma first.
    private var afterValue = false

    /// An empty writer with room for `capacity` bytes (a track is about 900).
    public init(capacity: Int = 1_024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: Containers

    /// Opens an object: `{`.
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        afterValue = false
    }

    /// Closes the open object: `}`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        afterValue = true
    }

    /// Opens an array: `[`.
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        afterValue = false
    }

    /// Closes the open array: `]`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        afterValue = true
    }

    /// Writes `"name":`; the value comes next.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    // MARK: Scalars

    /// Writes `null`.
    public mutating func null() {
        separate()
        appendASCII("null")
        afterValue = true
    }

    /// Writes `true` or `false`.
    public mutating func value(_ bool: Bool) {
        separate()
        appendASCII(bool ? "true" : "false")
        afterValue = true
    }

    /// Writes an integer in decimal, without building a String.
    public mutating func value(_ int: Int64) {
        separate()
        Self.appendDecimal(int, to: &bytes)
        afterValue = true
    }

    /// Appends `int` in decimal to `bytes`: the one integer formatter of every JSON and XML writer.
    @inlinable
    public static func appendDecimal<Sink: ByteSink & ~Copyable>(_ int: Int64, to bytes: inout Sink) {
        if int < 0 { bytes.append(UInt8(ascii: "-")) }
        // The magnitude as UInt64, so Int64.min has one too. Digits are made from the least
        // significant, two at a time: division by the constant 100 compiles to a multiplication,
        // where dividing by a running power of ten cost a hardware division per digit (a
        // 19-digit group ID took about sixty, a tenth of a page of songs).
        var magnitude = int.magnitude
        var digits = InlineArray<20, UInt8>(repeating: 0)
        var start = 20
        while magnitude >= 100 {
            let (quotient, pair) = magnitude.quotientAndRemainder(dividingBy: 100)
            start -= 2
            digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: pair / 10)
            digits[start + 1] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: pair % 10)
            magnitude = quotient
        }
        if magnitude >= 10 {
            start -= 2
            digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude / 10)
            digits[start + 1] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
        } else {
            start -= 1
            digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude)
        }
        for index in start..<20 { bytes.append(digits[index]) }
    }

    /// Writes an integer in decimal.
    public mutating func value(_ int: Int) { value(Int64(int)) }

    /// Writes a double as JSONEncoder does: Swift's shortest round-trip `description` with a
    /// trailing `.0` dropped (`3`, `0.1`, `1e-07`, `1e+300`, `-0`). NaN and infinities set
    /// `needsFallback`, since JSONEncoder throws for them.
    public mutating func value(_ double: Double) {
        guard double.isFinite else {
            needsFallback = true
            null()
            return
        }
        separate()
        let text = double.description  // at most 24 bytes: a small string, no allocation
        var utf8 = text.utf8[...]
        if utf8.count >= 2, utf8.last == UInt8(ascii: "0"), utf8.dropLast().last == UInt8(ascii: ".") {
            utf8 = utf8.dropLast(2)
        }
        bytes.append(contentsOf: utf8)
        afterValue = true
    }

    /// Writes a string in quotes, escaped as JSONEncoder escapes with `.withoutEscapingSlashes`:
    /// `\"`, `\\`, `\b \t \n \f \r`, other bytes below 0x20 as `\u00xx` (lower-case hex); `/`,
    /// DEL, U+2028/U+2029 and all non-ASCII as their raw UTF-8.
    public mutating func value(_ string: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        Self.appendEscaped(string, to: &bytes, lineSeparators: false)
        bytes.append(UInt8(ascii: "\""))
        afterValue = true
    }

    /// Writes a date as the `.iso8601` strategy does: `2026-12-01T09:14:28Z`, UTC, the seconds
    /// rounded down (fractions are dropped; before 1970 too, so -0.5 s is 23:59:59).
    public mutating func value(_ date: Date) {
        // Floor the seconds since 2001 (as Foundation does), not since 1970: adding the epoch offset
        // first can round a time just before a whole second up onto it.
        let reference = date.timeIntervalSinceReferenceDate.rounded(.down)
        // The proleptic Gregorian arithmetic below matches Foundation from the Gregorian reform
        // (1582-10-15) to the end of year 9999. Before it Foundation counts Julian days (ICU's hybrid
        // calendar), and past 9999 it writes odd text (`10000-…`, `-0029-…` for BC), so those rare
        // dates go to Foundation's own formatter, which is what `.iso8601` calls.
        guard reference >= -13_197_600_000, reference < 252_423_993_600 else {
            value(date.formatted(.iso8601))
            return
        }
        separate()
        let seconds = Int64(reference) + 978_307_200  // seconds since 1970-01-01T00:00:00Z
        // Floored division: a time before 1970 belongs to the day that starts before it.
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            days -= 1
            secondOfDay += 86_400
        }
        let (year, month, day) = Self.civil(fromDays: days)
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 22 bytes: "YYYY-MM-DDTHH:MM:SSZ"
        withUnsafeMutableBytes(of: &text) { buffer in
            func put(_ number: Int64, at offset: Int, width: Int) {
                var number = number
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: number % 10)
                    number /= 10
                }
            }
            buffer[0] = UInt8(ascii: "\"")
            put(year, at: 1, width: 4)
            buffer[5] = UInt8(ascii: "-")
            put(month, at: 6, width: 2)
            buffer[8] = UInt8(ascii: "-")
            put(day, at: 9, width: 2)
            buffer[11] = UInt8(ascii: "T")
            put(secondOfDay / 3_600, at: 12, width: 2)
            buffer[14] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, at: 15, width: 2)
            buffer[17] = UInt8(ascii: ":")
            put(secondOfDay % 60, at: 18, width: 2)
            buffer[20] = UInt8(ascii: "Z")
            buffer[21] = UInt8(ascii: "\"")
            bytes.append(contentsOf: buffer[0..<22])
        }
        afterValue = true
    }

    /// Writes a UUID as its `uuidString` (upper-case hex, hyphenated), as `UUID.encode(to:)` does.
    public mutating func value(_ uuid: UUID) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        withUnsafeBytes(of: uuid.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(Self.hexUpper[Int(byte >> 4)])
                bytes.append(Self.hexUpper[Int(byte & 0xF)])
            }
        }
        bytes.append(UInt8(ascii: "\""))
        afterValue = true
    }

    // Optionals: `null` when absent, as `KeyedEncodingContainer.encode(_: T?)` writes them.

    /// Writes the string, or `null`.
    public mutating func value(_ string: String?) { if let string { value(string) } else { null() } }
    /// Writes the integer, or `null`.
    public mutating func value(_ int: Int?) { if let int { value(int) } else { null() } }
    /// Writes the double, or `null`.
    public mutating func value(_ double: Double?) { if let double { value(double) } else { null() } }
    /// Writes the date, or `null`.
    public mutating func value(_ date: Date?) { if let date { value(date) } else { null() } }
    /// Writes the UUID, or `null`.
    public mutating func value(_ uuid: UUID?) { if let uuid { value(uuid) } else { null() } }

    /// Writes any `FastJSONEncodable` value.
    public mutating func value(_ item: some FastJSONEncodable) { item.writeJSON(to: &self) }

    /// Writes an optional `FastJSONEncodable` value, nil as `null`.
    public mutating func value(_ item: (some FastJSONEncodable)?) { if let item { item.writeJSON(to: &self) } else { null() } }

    /// Writes an array of strings.
    public mutating func value(_ strings: [String]) {
        beginArray()
        for string in strings { value(string) }
        endArray()
    }

    /// Writes an array of `FastJSONEncodable` values.
    public mutating func value(_ items: [some FastJSONEncodable]) {
        beginArray()
        for item in items { item.writeJSON(to: &self) }
        endArray()
    }

    // MARK: Internals

    private static let hexUpper: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// A comma before a second sibling.
    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Year, month and day of the proleptic Gregorian calendar for days since 1970-01-01
    /// (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// Where the JSON and XML writers append bytes: an array, or a writer's own buffer. The escaper and
/// the number formatter write through it, so every writer shares them.
public protocol ByteSink: ~Copyable {
    /// Appends one byte.
    mutating func append(_ byte: UInt8)
    /// Appends `bytes` in one copy.
    mutating func append(bytes: UnsafeBufferPointer<UInt8>)
}

extension Array: ByteSink where Element == UInt8 {
    /// Appends `bytes` in one copy.
    @inlinable
    public mutating func append(bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
}

/// The one JSON string escaper of the project, and the one integer formatter.
extension JSONWriter {
    /// Appends `string`'s JSON escape (without the quotes) to `bytes`: the one JSON string escaper of
    /// the project. `\"`, `\\`, `\b \t \n \f \r`, other bytes below 0x20 as `\u00xx`; with
    /// `lineSeparators`, U+2028 and U+2029 as `\u2028`/`\u2029` too, so JSONP stays valid script
    /// (JSONEncoder writes them raw, which `/api/` matches). Runs that need no escape are copied whole.
    @inlinable
    public static func appendEscaped<Sink: ByteSink & ~Copyable>(_ string: String, to bytes: inout Sink, lineSeparators: Bool) {
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                let separator =
                    lineSeparators && byte == 0xE2 && index + 2 < utf8.count && utf8[index + 1] == 0x80
                    && (utf8[index + 2] == 0xA8 || utf8[index + 2] == 0xA9)
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || separator else {
                    index += 1
                    continue
                }
                if runStart < index { bytes.append(bytes: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                bytes.append(UInt8(ascii: "\\"))
                if separator {
                    for byte in [UInt8(ascii: "u"), UInt8(ascii: "2"), UInt8(ascii: "0"), UInt8(ascii: "2")] { bytes.append(byte) }
                    bytes.append(utf8[index + 2] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9"))
                    index += 3
                    runStart = index
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default:
                    bytes.append(UInt8(ascii: "u"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(hexDigit(byte >> 4))
                    bytes.append(hexDigit(byte & 0xF))
                }
                index += 1
                runStart = index
            }
            if runStart < utf8.count { bytes.append(bytes: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
    }

    /// The lower-case hex digit of `nibble` (0–15).
    @inlinable
    static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }
}

// MARK: - Documents

extension Track: FastJSONEncodable {
    /// Writes the track as `Track.encode(to:)` does: every key, absent optionals as `null`.
    public func writeJSON(to writer: inout JSONWriter) { writeJSON(to: &writer, section: nil) }

    /// The track's object, with `section` (a `ListedTrack`'s) merged in at its sorted place, since
    /// JSONEncoder sorts the keys of both `encode(to:)` calls together.
    func writeJSON(to w: inout JSONWriter, section: String?) {
        // Keys in UTF-8 byte order, as `.sortedKeys` orders them; FastJSONTests pins the order.
        w.beginObject()
        w.key("album")
        w.value(album)
        w.key("albumArtist")
        w.value(albumArtist)
        w.key("albumArtists")
        w.value(details.albumArtists)
        w.key("albumVersion")
        w.value(details.albumVersion)
        w.key("artist")
        w.value(artist)
        w.key("artists")
        w.value(details.artists)
        w.key("artworkID")
        w.value(artworkID?.rawValue)
        w.key("audioHash")
        w.value(audioHash)
        w.key("barcode")
        w.value(details.barcode)
        w.key("bitDepth")
        w.value(details.bitDepth)
        w.key("bitrate")
        w.value(bitrate)
        w.key("bpm")
        w.value(details.bpm)
        w.key("catalogNumbers")
        w.value(details.catalogNumbers)
        w.key("channels")
        w.value(channels)
        w.key("codec")
        w.value(codec)
        w.key("comment")
        w.value(comment)
        w.key("compilation")
        w.value(compilation)
        w.key("composer")
        w.value(composer)
        w.key("composers")
        w.value(details.composers)
        w.key("contributors")
        w.value(details.contributors)
        w.key("cue")
        if let cue = details.cue {
            w.beginObject()
            w.key("end")
            w.value(cue.end)
            w.key("number")
            w.value(cue.number)
            w.key("sheet")
            w.value(cue.sheet)
            w.key("start")
            w.value(cue.start)
            w.endObject()
        } else {
            w.null()
        }
        w.key("dateAdded")
        w.value(dateAdded)
        w.key("dateModified")
        w.value(dateModified)
        w.key("discCount")
        w.value(discCount)
        w.key("discNumber")
        w.value(discNumber)
        w.key("discSubtitle")
        w.value(details.discSubtitle)
        w.key("duration")
        w.value(duration)
        w.key("fileModified")
        w.value(fileModified)
        w.key("fileSize")
        w.value(fileSize)
        w.key("genre")
        w.value(genre)
        w.key("genres")
        w.value(details.genres)
        w.key("hasArtwork")
        w.value(hasArtwork)
        w.key("id")
        w.value(id.rawValue)
        w.key("isrcs")
        w.value(details.isrcs)
        w.key("labels")
        w.value(details.labels)
        w.key("lastPlayed")
        w.value(lastPlayed)
        w.key("lyrics")
        w.value(lyrics)
        w.key("media")
        w.value(details.media)
        w.key("missing")
        w.value(missing)
        w.key("missingSince")
        w.value(missingSince)
        w.key("moods")
        w.value(details.moods)
        w.key("musicBrainz")
        w.value(details.musicBrainz)
        w.key("originalDate")
        w.value(details.originalDate)
        w.key("path")
        w.value(path)
        w.key("playCount")
        w.value(playCount)
        w.key("rating")
        w.value(rating)
        w.key("releaseCountry")
        w.value(details.releaseCountry)
        w.key("releaseDate")
        w.value(details.releaseDate)
        w.key("releaseStatus")
        w.value(details.releaseStatus)
        w.key("releaseTypes")
        w.value(details.releaseTypes)
        w.key("replayGain")
        w.value(details.replayGain)
        w.key("sampleRate")
        w.value(sampleRate)
        if let section {
            w.key("section")
            w.value(section)
        }
        w.key("skipCount")
        w.value(skipCount)
        w.key("sortAlbum")
        w.value(sortAlbum)
        w.key("sortAlbumArtist")
        w.value(sortAlbumArtist)
        w.key("sortArtist")
        w.value(sortArtist)
        w.key("sortComposer")
        w.value(sortComposer)
        w.key("sortTitle")
        w.value(sortTitle)
        w.key("title")
        w.value(title)
        w.key("trackCount")
        w.value(trackCount)
        w.key("trackNumber")
        w.value(trackNumber)
        w.key("year")
        w.value(year)
        w.endObject()
    }
}

extension Contributor: FastJSONEncodable {
    /// `{"name","role","subRole"?}` in sorted order, `subRole` only where there is one.
    public func writeJSON(to w: inout JSONWriter) {
        w.beginObject()
        w.key("name")
        w.value(name)
        w.key("role")
        w.value(role)
        if let subRole {
            w.key("subRole")
            w.value(subRole)
        }
        w.endObject()
    }
}

extension MusicBrainzIDs: FastJSONEncodable {
    /// Every key, in sorted order, absent ones null or empty.
    public func writeJSON(to w: inout JSONWriter) {
        w.beginObject()
        w.key("acoustID")
        w.value(acoustID)
        w.key("albumArtistIDs")
        w.value(albumArtistIDs)
        w.key("artistIDs")
        w.value(artistIDs)
        w.key("recordingID")
        w.value(recordingID)
        w.key("releaseGroupID")
        w.value(releaseGroupID)
        w.key("releaseID")
        w.value(releaseID)
        w.key("releaseTrackID")
        w.value(releaseTrackID)
        w.key("workIDs")
        w.value(workIDs)
        w.endObject()
    }
}

extension ReplayGain: FastJSONEncodable {
    /// Every key, in sorted order, absent ones null.
    public func writeJSON(to w: inout JSONWriter) {
        w.beginObject()
        w.key("albumGain")
        w.value(albumGain)
        w.key("albumPeak")
        w.value(albumPeak)
        w.key("trackGain")
        w.value(trackGain)
        w.key("trackPeak")
        w.value(trackPeak)
        w.endObject()
    }
}

extension ListedTrack: FastJSONEncodable {
    /// Writes the track's keys with `section` among them, as `encode(to:)` does.
    public func writeJSON(to writer: inout JSONWriter) { track.writeJSON(to: &writer, section: section) }
}

extension PageResult: FastJSONEncodable where Item: FastJSONEncodable {
    /// Writes `{"items":[…],"nextCursor":…|null,"total":N}`.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("items")
        writer.value(items)
        writer.key("nextCursor")
        writer.value(nextCursor)
        writer.key("total")
        writer.value(total)
        writer.endObject()
    }
}

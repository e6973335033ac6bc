import Foundation
import ShelfCore

/// The tag names `TrackDetails` is read from, by TagLib's unified keys (the same in every
/// container: TagLib maps ID3 frames, MP4 atoms and APE items onto them).
enum DetailKeys {
    /// Roles read as contributors; the key lower-cased is the role.
    static let roles = ["LYRICIST", "CONDUCTOR", "REMIXER", "PRODUCER", "ENGINEER", "MIXER", "DJMIXER", "ARRANGER"]
    /// Lists whose values are identifiers, split on "/" and ";" whatever the settings say.
    static let idSeparators = ["/", ";", ","]
}

extension AudioFileTags {
    /// What the tags say beyond the display fields, and what was malformed and left out (a gain
    /// that is not a number is reported, never guessed).
    public func details(separators: TagSeparators = .standard) -> (details: TrackDetails, problems: [String]) {
        var d = TrackDetails()
        var problems: [String] = []
        // ID3v2.3 has no multi-value frames: taggers join a list's values with "/" (Picard's and
        // mutagen's default), so keys that are lists by definition split on it there.
        let joinedBySlash = id3v2Version == 3
        func raw(_ key: String) -> [String] {
            values(key).map { TrackDetails.clean($0).trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        }
        /// A key holding a list: several values as they are, a single one split (in ID3v2.3 also on
        /// "/", except for the display credits, where "AC/DC" is one name).
        func list(_ key: String, _ on: [String], listKey: Bool = true) -> [String] {
            let found = raw(key)
            guard found.count == 1 else { return unique(found) }
            let seps = listKey && joinedBySlash ? on + ["/"] : on
            return TagSeparators.split(found[0], on: seps)
        }
        func unique(_ values: [String]) -> [String] {
            var seen = Set<String>()
            return values.filter { seen.insert($0).inserted }
        }
        func first(_ keys: String...) -> String? { keys.lazy.compactMap { raw($0).first }.first }

        let names = separators.names
        d.artists = raw("ARTISTS").isEmpty ? list("ARTIST", names, listKey: false) : list("ARTISTS", names)
        d.albumArtists = raw("ALBUMARTISTS").isEmpty ? list("ALBUMARTIST", names, listKey: false) : list("ALBUMARTISTS", names)
        d.genres = unique(raw("GENRE").flatMap { TagSeparators.split($0, on: separators.genres) })
        d.composers = list("COMPOSER", names)
        d.moods = unique(raw("MOOD").flatMap { TagSeparators.split($0, on: separators.genres) })

        var contributors: [Contributor] = []
        for key in DetailKeys.roles {
            for name in list(key, names) { contributors.append(Contributor(role: key.lowercased(), name: name)) }
        }
        // Vorbis, APE and MP4 spell a performer "Name (instrument)"; TagLib gives ID3v2.4's TMCL
        // (and 2.3's IPLS) as PERFORMER:INSTRUMENT keys.
        for value in raw("PERFORMER") {
            if value.hasSuffix(")"), let open = value.lastIndex(of: "("), open > value.startIndex {
                let name = value[..<open].trimmingCharacters(in: .whitespaces)
                let part = value[value.index(after: open)..<value.index(before: value.endIndex)].trimmingCharacters(in: .whitespaces)
                contributors.append(Contributor(role: "performer", subRole: part.isEmpty ? nil : part, name: name.isEmpty ? value : name))
            } else {
                contributors.append(Contributor(role: "performer", name: value))
            }
        }
        for key in (properties.keys.filter { $0.hasPrefix("PERFORMER:") }.sorted()) {
            let part = String(key.dropFirst("PERFORMER:".count)).lowercased()
            for name in list(key, names) {
                contributors.append(Contributor(role: "performer", subRole: part.isEmpty ? nil : part, name: name))
            }
        }
        d.contributors = contributors

        func ids(_ key: String) -> [String] { unique(raw(key).flatMap { TagSeparators.split($0, on: DetailKeys.idSeparators) }) }
        d.musicBrainz = MusicBrainzIDs(
            recordingID: first("MUSICBRAINZ_TRACKID"), releaseTrackID: first("MUSICBRAINZ_RELEASETRACKID"),
            releaseID: first("MUSICBRAINZ_ALBUMID"), releaseGroupID: first("MUSICBRAINZ_RELEASEGROUPID"),
            artistIDs: ids("MUSICBRAINZ_ARTISTID"), albumArtistIDs: ids("MUSICBRAINZ_ALBUMARTISTID"),
            workIDs: ids("MUSICBRAINZ_WORKID"), acoustID: first("ACOUSTID_ID", "ACOUSTID ID"))

        d.replayGain = replayGain(&problems)

        d.originalDate = date(first("ORIGINALDATE", "ORIGINALYEAR"), "ORIGINALDATE", &problems)
        d.releaseDate = date(first("DATE", "RELEASEDATE"), "DATE", &problems)
        d.releaseTypes = unique(raw("RELEASETYPE").flatMap { TagSeparators.split($0, on: separators.genres) })
        d.releaseStatus = first("RELEASESTATUS")
        d.labels = list("LABEL", [";", " / "])
        d.catalogNumbers = list("CATALOGNUMBER", [";", " / "])
        d.barcode = first("BARCODE")
        d.isrcs = ids("ISRC")
        if let bpm = first("BPM") {
            if let value = Double(bpm.replacingOccurrences(of: ",", with: ".")), value.isFinite, value > 0, value < 10_000 {
                d.bpm = Int(value.rounded())
            } else {
                problems.append("BPM \"\(bpm)\" is not a tempo; left out")
            }
        }
        d.discSubtitle = first("DISCSUBTITLE")
        d.media = first("MEDIA")
        d.releaseCountry = first("RELEASECOUNTRY")
        d.albumVersion = first("ALBUMVERSION")
        d.bitDepth = bitDepth > 0 ? bitDepth : nil
        return (d, problems)
    }

    /// ReplayGain from `REPLAYGAIN_*` (every container's spelling reaches these keys), and an
    /// Opus file's `R128_*_GAIN`: Q7.8 fixed point relative to −23 LUFS, so +5 dB to ReplayGain's
    /// −18 LUFS reference. In an Opus file R128 wins, since players apply it on top of the header.
    private func replayGain(_ problems: inout [String]) -> ReplayGain? {
        func number(_ key: String, gain: Bool) -> Double? {
            guard let text = values(key).first?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            var body = Substring(text)
            if gain, body.lowercased().hasSuffix("db") { body = body.dropLast(2) }
            let cleaned = body.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: ".")
            let plain = cleaned.hasPrefix("+") ? String(cleaned.dropFirst()) : cleaned
            guard let value = Double(plain), value.isFinite, gain ? abs(value) < 100 : (value >= 0 && value < 100) else {
                problems.append("\(key) \"\(text)\" is not a \(gain ? "gain in dB" : "peak"); left out")
                return nil
            }
            return value
        }
        func r128(_ key: String) -> Double? {
            guard let text = values(key).first?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            guard let q78 = Int(text), (-32768...32767).contains(q78) else {
                problems.append("\(key) \"\(text)\" is not a Q7.8 gain; left out")
                return nil
            }
            return Double(q78) / 256 + 5
        }
        var gain = ReplayGain(
            trackGain: number("REPLAYGAIN_TRACK_GAIN", gain: true), trackPeak: number("REPLAYGAIN_TRACK_PEAK", gain: false),
            albumGain: number("REPLAYGAIN_ALBUM_GAIN", gain: true), albumPeak: number("REPLAYGAIN_ALBUM_PEAK", gain: false))
        if let track = r128("R128_TRACK_GAIN") { gain.trackGain = codec == "opus" || gain.trackGain == nil ? track : gain.trackGain }
        if let album = r128("R128_ALBUM_GAIN") { gain.albumGain = codec == "opus" || gain.albumGain == nil ? album : gain.albumGain }
        return gain == ReplayGain() ? nil : gain
    }

    /// "1969", "1969-09" or "1969-09-26" from a tagged date ("1969-09-26T00:00:00", "1969/09/26"
    /// and "1969.09.26" included); a value with no year is reported and left out.
    private func date(_ text: String?, _ key: String, _ problems: inout [String]) -> String? {
        guard let text else { return nil }
        let digits = text.split(whereSeparator: { "-/. T:".contains($0) }).prefix(3).map(String.init)
        guard let year = digits.first, year.count == 4, Int(year) != nil else {
            problems.append("\(key) \"\(text)\" is not a date; left out")
            return nil
        }
        var parts = [year]
        for (part, range) in zip(digits.dropFirst(), [1...12, 1...31]) {
            guard let n = Int(part), range.contains(n), part.count <= 2 else { break }
            parts.append(part.count == 1 ? "0" + part : part)
        }
        return parts.joined(separator: "-")
    }
}

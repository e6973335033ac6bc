import Foundation

/// A field a batch edit can set or clear.
public enum EditableField: String, Sendable, Hashable, Codable, CaseIterable {
    case title, artist, album, albumArtist, composer, genre, comment, lyrics
    case sortTitle, sortArtist, sortAlbum, sortAlbumArtist, sortComposer
    case year, trackNumber, trackCount, discNumber, discCount
    case compilation
    /// Lists, given as `A;B` and written as the format writes lists.
    case artists, albumArtists, genres, composers, moods, labels, releaseTypes, isrcs, catalogNumbers
    case bpm, discSubtitle
    /// Kept in the library only: files have no rating every format and player agrees on.
    case rating

    /// Whether the value is a whole number (the rest are text, and `compilation` a yes/no).
    public var isNumber: Bool { [.year, .trackNumber, .trackCount, .discNumber, .discCount, .rating, .bpm].contains(self) }

    /// A list field's place in `TrackDetails` and its TagLib property key (nil for the others).
    public var list: (keyPath: WritableKeyPath<TrackDetails, [String]>, property: String)? {
        switch self {
        case .artists: (\.artists, "ARTISTS")
        case .albumArtists: (\.albumArtists, "ALBUMARTISTS")
        case .genres: (\.genres, "GENRE")
        case .composers: (\.composers, "COMPOSER")
        case .moods: (\.moods, "MOOD")
        case .labels: (\.labels, "LABEL")
        case .releaseTypes: (\.releaseTypes, "RELEASETYPE")
        case .isrcs: (\.isrcs, "ISRC")
        case .catalogNumbers: (\.catalogNumbers, "CATALOGNUMBER")
        default: nil
        }
    }

    /// A text field's place in `Track` and its TagLib property key: the one table edits,
    /// file writes and exports all read (nil for numbers, compilation and rating).
    public var text: (keyPath: WritableKeyPath<Track, String?>, property: String)? {
        switch self {
        case .title: (\.title, "TITLE")
        case .artist: (\.artist, "ARTIST")
        case .album: (\.album, "ALBUM")
        case .albumArtist: (\.albumArtist, "ALBUMARTIST")
        case .composer: (\.composer, "COMPOSER")
        case .genre: (\.genre, "GENRE")
        case .comment: (\.comment, "COMMENT")
        case .lyrics: (\.lyrics, "LYRICS")
        case .sortTitle: (\.sortTitle, "TITLESORT")
        case .sortArtist: (\.sortArtist, "ARTISTSORT")
        case .sortAlbum: (\.sortAlbum, "ALBUMSORT")
        case .sortAlbumArtist: (\.sortAlbumArtist, "ALBUMARTISTSORT")
        case .sortComposer: (\.sortComposer, "COMPOSERSORT")
        default: nil
        }
    }
}

/// What happens to a track's picture in a batch edit.
public enum PictureChange: Sendable, Hashable {
    case unchanged
    /// Set to these image bytes (JPEG or PNG), in the file and in the library.
    case set(Data)
    case remove
}

/// The changes of one batch edit, applied alike to every track in it.
public struct MetadataChanges: Sendable, Hashable {
    /// Joins a list's values in a file property handed to the tag writer (U+001F, which no tag holds).
    public static let listSeparator = "\u{1F}"

    /// The values of a list field as given on the command line: `A;B` (blanks dropped).
    public static func listValues(_ text: String?) -> [String] {
        guard let text else { return [] }
        return TrackDetails.clean(text).split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// New values by field; nil clears the field.
    public var values: [EditableField: String?]
    public var picture: PictureChange

    /// Changes setting `values` (nil clears) and the picture.
    public init(_ values: [EditableField: String?] = [:], picture: PictureChange = .unchanged) {
        self.values = values
        self.picture = picture
    }

    /// The tags of what an edit does not set but an export carries: MusicBrainz IDs, ReplayGain,
    /// release details (every value a field of `TrackDetails` holds beyond the editable lists).
    public static func detailProperties(of t: Track) -> [String: String?] {
        let d = t.details
        func list(_ values: [String]) -> String? { values.isEmpty ? nil : values.joined(separator: listSeparator) }
        func gain(_ value: Double?) -> String? { value.map { String(format: "%.2f dB", $0) } }
        func peak(_ value: Double?) -> String? { value.map { String(format: "%.6f", $0) } }
        var p: [String: String?] = [
            "MUSICBRAINZ_TRACKID": d.musicBrainz.recordingID, "MUSICBRAINZ_RELEASETRACKID": d.musicBrainz.releaseTrackID,
            "MUSICBRAINZ_ALBUMID": d.musicBrainz.releaseID, "MUSICBRAINZ_RELEASEGROUPID": d.musicBrainz.releaseGroupID,
            "MUSICBRAINZ_ARTISTID": list(d.musicBrainz.artistIDs), "MUSICBRAINZ_ALBUMARTISTID": list(d.musicBrainz.albumArtistIDs),
            "MUSICBRAINZ_WORKID": list(d.musicBrainz.workIDs), "ACOUSTID_ID": d.musicBrainz.acoustID,
            "REPLAYGAIN_TRACK_GAIN": gain(d.replayGain?.trackGain), "REPLAYGAIN_TRACK_PEAK": peak(d.replayGain?.trackPeak),
            "REPLAYGAIN_ALBUM_GAIN": gain(d.replayGain?.albumGain), "REPLAYGAIN_ALBUM_PEAK": peak(d.replayGain?.albumPeak),
            "ORIGINALDATE": d.originalDate, "RELEASESTATUS": d.releaseStatus, "BARCODE": d.barcode, "MEDIA": d.media,
            "RELEASECOUNTRY": d.releaseCountry, "MOOD": list(d.moods),
        ]
        for role in ["lyricist", "conductor", "remixer", "producer", "engineer", "mixer", "djmixer", "arranger"] {
            p[role.uppercased()] = list(d.contributors.filter { $0.role == role }.map(\.name))
        }
        let performers = d.contributors.filter { $0.role == "performer" }
        p["PERFORMER"] = list(performers.map { credit in credit.subRole.map { "\(credit.name) (\($0))" } ?? credit.name })
        // Only what the track has: an absent value is not written as a removal into a new file.
        return p.filter { $0.value != nil }
    }

    /// Why the changes cannot apply (a number that is not one, a rating outside 0…100), or nil.
    public func problem() -> String? {
        for (field, value) in values {
            guard let value, !SortKey.isBlank(value) else { continue }
            if field.isNumber {
                guard let number = Int(value.trimmingCharacters(in: .whitespaces)), number >= 0 else {
                    return "\(field.rawValue) must be a whole number ≥ 0, got '\(value)'"
                }
                if field == .rating && number > 100 { return "rating must be 0…100, got \(number)" }
            }
            if field == .compilation && Self.flag(value) == nil { return "compilation must be yes or no, got '\(value)'" }
        }
        return nil
    }

    static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "yes", "true": true
        case "0", "no", "false": false
        default: nil
        }
    }

    /// The track with the changes applied (the picture is the caller's: it needs the store).
    public func applied(to track: Track) -> Track {
        var t = track
        for (field, raw) in values {
            let text = raw.flatMap { SortKey.isBlank($0) ? nil : $0 }
            let number = text.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            if let place = field.text {
                t[keyPath: place.keyPath] = text
                // A display field that shares its tag with a list sets the list too, unless the
                // same edit sets the list.
                if field == .genre && values[.genres] == nil { t.details.genres = text.map { [$0] } ?? [] }
                if field == .composer && values[.composers] == nil { t.details.composers = text.map { [$0] } ?? [] }
                continue
            }
            if let place = field.list {
                let list = Self.listValues(text)
                t.details[keyPath: place.keyPath] = list
                // The display fields that share the tag show its first value, as a file read does.
                if field == .genres { t.genre = list.first }
                if field == .composers { t.composer = list.first }
                continue
            }
            switch field {
            case .bpm: t.details.bpm = number
            case .discSubtitle: t.details.discSubtitle = text
            case .year: t.year = number
            case .trackNumber: t.trackNumber = number
            case .trackCount: t.trackCount = number
            case .discNumber: t.discNumber = number
            case .discCount: t.discCount = number
            case .compilation: t.compilation = text.flatMap(Self.flag) ?? false
            case .rating: t.rating = number ?? 0
            default: break
            }
        }
        return t
    }

    /// The file properties (TagLib's unified keys) that carry an edited track's values; nil
    /// removes one. Rating stays in the library.
    public func fileProperties(of t: Track) -> [String: String?] {
        var properties: [String: String?] = [:]
        func pair(_ number: Int?, _ total: Int?) -> String? {
            guard let number else { return nil }
            return total.map { "\(number)/\($0)" } ?? String(number)
        }
        for field in values.keys {
            if let place = field.text {
                // GENRE and COMPOSER are written from their lists when those are edited too.
                if (field == .genre && values[.genres] != nil) || (field == .composer && values[.composers] != nil) { continue }
                properties[place.property] = t[keyPath: place.keyPath]
                continue
            }
            if let place = field.list {
                let list = t.details[keyPath: place.keyPath]
                let display = field == .genres ? t.genre : field == .composers ? t.composer : nil
                properties[place.property] = list.isEmpty ? display : list.joined(separator: Self.listSeparator)
                continue
            }
            switch field {
            case .bpm: properties["BPM"] = t.details.bpm.map(String.init)
            case .discSubtitle: properties["DISCSUBTITLE"] = t.details.discSubtitle
            case .year: properties["DATE"] = t.year.map(String.init)
            case .trackNumber, .trackCount: properties["TRACKNUMBER"] = pair(t.trackNumber, t.trackCount)
            case .discNumber, .discCount: properties["DISCNUMBER"] = pair(t.discNumber, t.discCount)
            case .compilation: properties["COMPILATION"] = t.compilation ? "1" : nil
            default: break
            }
        }
        return properties
    }
}

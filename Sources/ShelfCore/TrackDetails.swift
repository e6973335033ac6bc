import Foundation

/// A person credited on a track in a role other than the track artist: a conductor, a remixer, a
/// performer on an instrument (`subRole`).
public struct Contributor: Sendable, Codable, Hashable {
    /// Lower-case role: lyricist, conductor, remixer, producer, engineer, mixer, djmixer, arranger, performer.
    public var role: String
    /// The instrument or part for a performer ("guitar"), else nil.
    public var subRole: String?
    public var name: String

    /// A credit of `name` in `role`.
    public init(role: String, subRole: String? = nil, name: String) {
        self.role = role
        self.subRole = subRole
        self.name = name
    }

    enum CodingKeys: String, CodingKey { case role, subRole, name }

    /// `subRole` only where there is one, as the JSON shows it.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(role, forKey: .role)
        try c.encodeIfPresent(subRole, forKey: .subRole)
        try c.encode(name, forKey: .name)
    }
}

/// The MusicBrainz identifiers a file carries (Picard's tags), and its AcoustID.
public struct MusicBrainzIDs: Sendable, Codable, Equatable {
    @NullWhenNil public var recordingID: String?
    @NullWhenNil public var releaseTrackID: String?
    @NullWhenNil public var releaseID: String?
    @NullWhenNil public var releaseGroupID: String?
    public var artistIDs: [String]
    public var albumArtistIDs: [String]
    public var workIDs: [String]
    @NullWhenNil public var acoustID: String?

    /// Identifiers as given; lists default to empty.
    public init(
        recordingID: String? = nil, releaseTrackID: String? = nil, releaseID: String? = nil, releaseGroupID: String? = nil,
        artistIDs: [String] = [], albumArtistIDs: [String] = [], workIDs: [String] = [], acoustID: String? = nil
    ) {
        self.recordingID = recordingID
        self.releaseTrackID = releaseTrackID
        self.releaseID = releaseID
        self.releaseGroupID = releaseGroupID
        self.artistIDs = artistIDs
        self.albumArtistIDs = albumArtistIDs
        self.workIDs = workIDs
        self.acoustID = acoustID
    }

    /// True when the file carries no identifier at all.
    public var isEmpty: Bool { self == MusicBrainzIDs() }

    /// Every identifier, for the `mbid:` filter.
    public var all: [String] {
        [recordingID, releaseTrackID, releaseID, releaseGroupID, acoustID].compactMap { $0 } + artistIDs + albumArtistIDs + workIDs
    }

    enum CodingKeys: String, CodingKey {
        case recordingID, releaseTrackID, releaseID, releaseGroupID, artistIDs, albumArtistIDs, workIDs, acoustID
    }

    /// Lists may be missing on input (a script writing only `recordingID`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            recordingID: try c.decodeIfPresent(String.self, forKey: .recordingID),
            releaseTrackID: try c.decodeIfPresent(String.self, forKey: .releaseTrackID),
            releaseID: try c.decodeIfPresent(String.self, forKey: .releaseID),
            releaseGroupID: try c.decodeIfPresent(String.self, forKey: .releaseGroupID),
            artistIDs: try c.decodeIfPresent([String].self, forKey: .artistIDs) ?? [],
            albumArtistIDs: try c.decodeIfPresent([String].self, forKey: .albumArtistIDs) ?? [],
            workIDs: try c.decodeIfPresent([String].self, forKey: .workIDs) ?? [],
            acoustID: try c.decodeIfPresent(String.self, forKey: .acoustID))
    }
}

/// ReplayGain as tagged: gains in dB relative to ReplayGain's −18 LUFS reference (an Opus file's
/// R128 gains converted), peaks linear (1.0 = full scale).
public struct ReplayGain: Sendable, Codable, Equatable {
    @NullWhenNil public var trackGain: Double?
    @NullWhenNil public var trackPeak: Double?
    @NullWhenNil public var albumGain: Double?
    @NullWhenNil public var albumPeak: Double?
    /// True when Shelf measured these (`shelf loudness`), nil when they came from the file's tags:
    /// measured gains are Shelf's to redo (a track added to the album changes its album gain),
    /// tagged ones are the user's to keep.
    public var measured: Bool?

    /// Gains and peaks as given.
    public init(trackGain: Double? = nil, trackPeak: Double? = nil, albumGain: Double? = nil, albumPeak: Double? = nil) {
        self.trackGain = trackGain
        self.trackPeak = trackPeak
        self.albumGain = albumGain
        self.albumPeak = albumPeak
    }
}

/// Where a track lies in an audio image split by a CUE sheet: the image is the track's file,
/// and the track is the audio from `start` to `end` (nil: the image's end).
public struct CueSlice: Sendable, Codable, Equatable {
    /// The `.cue` file beside the image; nil for a sheet embedded in the image (a FLAC's `CUESHEET`).
    @NullWhenNil public var sheet: String?
    /// The track's number in the sheet (0: the hidden track before track 1).
    public var number: Int
    /// Seconds into the image.
    public var start: Double
    /// Seconds into the image where the track ends; nil: the image's end.
    @NullWhenNil public var end: Double?

    /// A slice from its parts.
    public init(sheet: String?, number: Int, start: Double, end: Double?) {
        self.sheet = sheet
        self.number = number
        self.start = start
        self.end = end
    }

    // Every key, absent ones as null, in the fast writer's order.
    enum CodingKeys: String, CodingKey { case end, number, sheet, start }
}

/// What a track's tags say beyond the display fields: every value of the list fields, the
/// credited roles, MusicBrainz IDs, ReplayGain and release details. Stored as one column
/// (`TrackDetails.encoded`) because no list needs its own rows in the store: the mirror keeps
/// the rows that filters and views read.
public struct TrackDetails: Sendable, Equatable {
    /// Every artist, in tag order (`ARTISTS`, else the `ARTIST` credit split on the separators).
    public var artists: [String] = []
    public var albumArtists: [String] = []
    public var genres: [String] = []
    public var composers: [String] = []
    public var moods: [String] = []
    public var contributors: [Contributor] = []
    public var musicBrainz = MusicBrainzIDs()
    public var replayGain: ReplayGain?
    /// "1969", "1969-09" or "1969-09-26", as tagged.
    public var originalDate: String?
    public var releaseDate: String?
    public var releaseTypes: [String] = []
    public var releaseStatus: String?
    public var labels: [String] = []
    public var catalogNumbers: [String] = []
    public var barcode: String?
    public var isrcs: [String] = []
    public var bpm: Int?
    public var discSubtitle: String?
    public var media: String?
    public var releaseCountry: String?
    public var albumVersion: String?
    /// Bits per sample of a lossless stream; nil for lossy codecs.
    public var bitDepth: Int?
    /// The track's place in an audio image its CUE sheet splits (nil for a file of its own).
    public var cue: CueSlice?

    /// Nothing beyond the display fields.
    public init() {}

    /// True when the tags held none of these.
    public var isEmpty: Bool { self == TrackDetails() }

    /// The details without `bitDepth`: what the metadata property group compares (the bit depth
    /// belongs to the file's audio).
    public var tagsOnly: TrackDetails {
        var copy = self
        copy.bitDepth = nil
        copy.cue = nil
        return copy
    }

    // The stored form: `key US value US value … RS key …` (U+001F between values, U+001E between
    // fields), a contributor as `role GS subRole GS name`. Decoding a page of rows is a split, not a
    // JSON parse; the three separators are removed from values when they are read from a file.
    private static let fieldSeparator: Character = "\u{1E}"
    private static let valueSeparator: Character = "\u{1F}"
    private static let partSeparator: Character = "\u{1D}"

    /// The MusicBrainz ID of the track's display artist: its one artist ID, when the track
    /// credits at most one artist (a joined credit's IDs belong to its list's names).
    public var displayArtistID: String? { Self.soleID(musicBrainz.artistIDs, of: artists) }

    /// The MusicBrainz ID of the track's album artist, by the rule of `displayArtistID`.
    public var displayAlbumArtistID: String? { Self.soleID(musicBrainz.albumArtistIDs, of: albumArtists) }

    /// The one ID of a credit that names at most one artist in its list; nil otherwise (a joined
    /// credit's IDs belong to its list's names). The rule of both display IDs, here and in `CreditLists`.
    static func soleID(_ ids: [String], of names: [String]) -> String? { ids.count == 1 && names.count <= 1 ? ids[0] : nil }

    /// The text stored in `track.details` (nil when empty).
    public var encoded: String? {
        if isEmpty { return nil }
        var out = ""
        func put(_ key: String, _ values: [String]) {
            guard !values.isEmpty else { return }
            if !out.isEmpty { out.append(Self.fieldSeparator) }
            out += key
            for value in values {
                out.append(Self.valueSeparator)
                out += value
            }
        }
        func put(_ key: String, _ value: String?) { put(key, value.map { [$0] } ?? []) }
        func put(_ key: String, _ value: Double?) { put(key, value.map { [String($0)] } ?? []) }
        put("a", artists)
        put("aa", albumArtists)
        put("g", genres)
        put("c", composers)
        put("mo", moods)
        put("cr", contributors.map { [$0.role, $0.subRole ?? "", $0.name].joined(separator: String(Self.partSeparator)) })
        put("mr", musicBrainz.recordingID)
        put("mt", musicBrainz.releaseTrackID)
        put("ml", musicBrainz.releaseID)
        put("mg", musicBrainz.releaseGroupID)
        put("ma", musicBrainz.artistIDs)
        put("mb", musicBrainz.albumArtistIDs)
        put("mw", musicBrainz.workIDs)
        put("ac", musicBrainz.acoustID)
        if let gain = replayGain {
            put("rtg", gain.trackGain)
            put("rtp", gain.trackPeak)
            put("rag", gain.albumGain)
            put("rap", gain.albumPeak)
            if gain.measured == true { put("rm", "1") }
            if gain == ReplayGain() { put("r0", "") }
        }
        put("od", originalDate)
        put("rd", releaseDate)
        put("rt", releaseTypes)
        put("rs", releaseStatus)
        put("lb", labels)
        put("cn", catalogNumbers)
        put("bc", barcode)
        put("is", isrcs)
        put("bpm", bpm.map(String.init))
        put("ds", discSubtitle)
        put("me", media)
        put("co", releaseCountry)
        put("av", albumVersion)
        put("bd", bitDepth.map(String.init))
        if let cue { put("cue", [String(cue.number), String(cue.start), cue.end.map { String($0) } ?? "", cue.sheet ?? ""]) }
        return out
    }

    /// The lists a track is credited by, as the views group it: `creditLists(encoded:)`.
    public struct CreditLists: Sendable, Equatable {
        public var artists: [String] = []
        public var genres: [String] = []
        public var composers: [String] = []
        public var albumArtists: [String] = []
        /// The MusicBrainz IDs of `artists` and `albumArtists` (the `ma` and `mb` fields).
        public var artistIDs: [String] = []
        public var albumArtistIDs: [String] = []

        /// Empty lists.
        public init() {}

        /// The lists as given.
        public init(artists: [String], genres: [String], composers: [String], albumArtists: [String], artistIDs: [String], albumArtistIDs: [String]) {
            self.artists = artists
            self.genres = genres
            self.composers = composers
            self.albumArtists = albumArtists
            self.artistIDs = artistIDs
            self.albumArtistIDs = albumArtistIDs
        }

        /// The display artist's MusicBrainz ID, by the rule of `TrackDetails.displayArtistID`.
        public var displayArtistID: String? { TrackDetails.soleID(artistIDs, of: artists) }
        /// The album artist's MusicBrainz ID, by the rule of `TrackDetails.displayAlbumArtistID`.
        public var displayAlbumArtistID: String? { TrackDetails.soleID(albumArtistIDs, of: albumArtists) }
    }

    /// The starts of the artist-ID fields (`ma`, `mb`) after a field separator.
    private static let idFields = ["\(fieldSeparator)ma\(valueSeparator)", "\(fieldSeparator)mb\(valueSeparator)"]

    /// The lists `creditLists(encoded:)` reads, from the decoded details.
    public var creditLists: CreditLists {
        CreditLists(
            artists: artists, genres: genres, composers: composers, albumArtists: albumArtists, artistIDs: musicBrainz.artistIDs,
            albumArtistIDs: musicBrainz.albumArtistIDs)
    }

    /// The artist, genre, composer and album-artist lists of a stored text without decoding the
    /// rest: they are among its first four fields (`encoded` writes them first), so a view's group
    /// refresh, which reads every member's lists, splits no more than that. The artists' IDs are
    /// further on, so only a track that carries some reads on to them.
    public static func creditLists(encoded: String) -> CreditLists {
        var result = CreditLists()
        for field in encoded.split(separator: fieldSeparator, maxSplits: 4, omittingEmptySubsequences: true).prefix(4) {
            let parts = field.split(separator: valueSeparator, omittingEmptySubsequences: false)
            switch parts.first {
            case "a": result.artists = parts.dropFirst().map(String.init)
            case "g": result.genres = parts.dropFirst().map(String.init)
            case "c": result.composers = parts.dropFirst().map(String.init)
            case "aa": result.albumArtists = parts.dropFirst().map(String.init)
            default: break
            }
        }
        // Most tracks carry no MusicBrainz artist ID; those that do have an `ma` or `mb` field.
        guard idFields.contains(where: { encoded.hasPrefix($0.dropFirst()) || encoded.contains($0) }) else { return result }
        for field in encoded.split(separator: fieldSeparator, omittingEmptySubsequences: true) {
            let parts = field.split(separator: valueSeparator, omittingEmptySubsequences: false)
            switch parts.first {
            case "ma": result.artistIDs = parts.dropFirst().map(String.init)
            case "mb": result.albumArtistIDs = parts.dropFirst().map(String.init)
            default: break
            }
        }
        return result
    }

    /// Reads the stored text; unknown keys (from a newer Shelf) are skipped.
    public init(encoded: String?) {
        guard let encoded, !encoded.isEmpty else { return }
        for field in encoded.split(separator: Self.fieldSeparator, omittingEmptySubsequences: true) {
            let parts = field.split(separator: Self.valueSeparator, omittingEmptySubsequences: false)
            guard let key = parts.first else { continue }
            let values = parts.dropFirst().map(String.init)
            let first = values.first
            func gain(_ set: (inout ReplayGain, Double?) -> Void) {
                var g = replayGain ?? ReplayGain()
                set(&g, first.flatMap(Double.init))
                replayGain = g
            }
            switch key {
            case "a": artists = values
            case "aa": albumArtists = values
            case "g": genres = values
            case "c": composers = values
            case "mo": moods = values
            case "cr":
                contributors = values.compactMap { value in
                    let p = value.split(separator: Self.partSeparator, omittingEmptySubsequences: false).map(String.init)
                    guard p.count == 3 else { return nil }
                    return Contributor(role: p[0], subRole: p[1].isEmpty ? nil : p[1], name: p[2])
                }
            case "mr": musicBrainz.recordingID = first
            case "mt": musicBrainz.releaseTrackID = first
            case "ml": musicBrainz.releaseID = first
            case "mg": musicBrainz.releaseGroupID = first
            case "ma": musicBrainz.artistIDs = values
            case "mb": musicBrainz.albumArtistIDs = values
            case "mw": musicBrainz.workIDs = values
            case "ac": musicBrainz.acoustID = first
            case "rtg": gain { $0.trackGain = $1 }
            case "rtp": gain { $0.trackPeak = $1 }
            case "rag": gain { $0.albumGain = $1 }
            case "rap": gain { $0.albumPeak = $1 }
            case "r0": replayGain = replayGain ?? ReplayGain()
            case "rm":
                var g = replayGain ?? ReplayGain()
                g.measured = true
                replayGain = g
            case "od": originalDate = first
            case "rd": releaseDate = first
            case "rt": releaseTypes = values
            case "rs": releaseStatus = first
            case "lb": labels = values
            case "cn": catalogNumbers = values
            case "bc": barcode = first
            case "is": isrcs = values
            case "bpm": bpm = first.flatMap { Int($0) }
            case "ds": discSubtitle = first
            case "me": media = first
            case "co": releaseCountry = first
            case "av": albumVersion = first
            case "bd": bitDepth = first.flatMap { Int($0) }
            case "cue":
                guard values.count == 4, let number = Int(values[0]), let start = Double(values[1]) else { continue }
                cue = CueSlice(sheet: values[3].isEmpty ? nil : values[3], number: number, start: start, end: Double(values[2]))
            default: continue
            }
        }
    }

    /// A value as it may be stored: the separators of the stored form become spaces.
    public static func clean(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: { (0x1D...0x1F).contains($0.value) }) else { return value }
        return String(String.UnicodeScalarView(value.unicodeScalars.map { (0x1D...0x1F).contains($0.value) ? " " : $0 }))
    }
}

/// How single-value tags are split into lists: `ARTIST=A; B` gives the artists A and B when no
/// `ARTISTS` tag is present. The default splits on "; ", ";", " / ", " feat. ", " ft. " and
/// " featuring " for people, and on ";", "/" and "," for genres and moods, so that "AC/DC" and
/// "Simon & Garfunkel" stay whole.
public struct TagSeparators: Sendable, Equatable {
    /// Separators of people's names (artists, album artists, composers and the other roles).
    public var names: [String]
    /// Separators of genres, moods and release types.
    public var genres: [String]

    /// The documented default.
    public static let standard = TagSeparators(
        names: [";", " / ", " feat. ", " ft. ", " featuring ", " Feat. ", " Ft. "], genres: [";", "/", ","])

    /// Separators as given; an empty list splits nothing.
    public init(names: [String], genres: [String]) {
        self.names = names
        self.genres = genres
    }

    /// `value` split on `separators`, each part trimmed, blanks dropped, repeats kept once.
    public static func split(_ value: String, on separators: [String]) -> [String] {
        var parts = [value]
        for separator in separators where !separator.isEmpty {
            parts = parts.flatMap { $0.components(separatedBy: separator) }
        }
        var seen = Set<String>()
        return parts.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty && seen.insert($0).inserted }
    }
}

import Foundation

/// One audio file in the library with its tags, audio properties and play statistics.
///
/// The property names are a public contract: they are the JSON keys the command line prints and
/// the names `--sort` accepts. Add properties freely; never rename one.
public struct Track: Sendable, Codable, Equatable, Identifiable {
    /// Assigned by the store; `.unassigned` before insertion.
    public var id: TrackID
    /// Absolute path of the audio file.
    public var path: String
    /// Size of the file in bytes.
    public var fileSize: Int64
    /// The file's modification time when it was last read.
    public var fileModified: Date?

    public var title: String?
    public var artist: String?
    public var album: String?
    public var albumArtist: String?
    public var composer: String?
    public var genre: String?
    public var year: Int?
    public var trackNumber: Int?
    public var trackCount: Int?
    public var discNumber: Int?
    public var discCount: Int?

    /// Duration in seconds.
    public var duration: Double?
    /// Average bitrate in kbit/s.
    public var bitrate: Int?
    /// Sample rate in Hz.
    public var sampleRate: Int?
    public var channels: Int?
    /// Codec name as TagLib reports it ("FLAC", "MP3", "AAC", "ALAC", "Vorbis", "Opus", …).
    public var codec: String?

    public var compilation: Bool
    public var comment: String?
    public var lyrics: String?

    /// Sort tags (TITLESORT, ARTISTSORT, …): used instead of the display value when sort tags are on
    /// and the tag is not blank.
    public var sortTitle: String?
    public var sortArtist: String?
    public var sortAlbum: String?
    public var sortAlbumArtist: String?
    public var sortComposer: String?

    /// The picture, stored once in the artwork table; nil when the track has none.
    public var artworkID: ArtworkID?
    /// Derived from `artworkID`, never stored on its own.
    public var hasArtwork: Bool { artworkID != nil }

    public var dateAdded: Date
    public var dateModified: Date
    public var playCount: Int
    public var skipCount: Int
    public var lastPlayed: Date?
    /// 0–100, as iTunes and most taggers store it (20 per star).
    public var rating: Int
    /// Identity of the audio payload (tags excluded), for finding duplicates and moved files.
    public var audioHash: String?
    /// Every value of the list fields, roles, MusicBrainz IDs, ReplayGain and release details;
    /// in JSON its fields sit beside the others (`artists`, `musicBrainz`, `replayGain`, …).
    public var details: TrackDetails
    /// When the file was found gone from a music root that was there (nil while it is on disk).
    /// A missing track keeps its ID, statistics, stars and playlist places; browsing hides it.
    public var missingSince: Date?
    /// The file the track's audio is in: its path, less the `#NN` of a track cut from an audio
    /// image by its CUE sheet (`details.cue`).
    public var filePath: String {
        guard details.cue != nil, let hash = path.lastIndex(of: "#") else { return path }
        return String(path[..<hash])
    }

    /// The path of track `number` of the image at `image` (`#NN`, or more digits past 99).
    public static func cuePath(image: String, number: Int) -> String {
        image + "#" + (number < 10 ? "0\(number)" : "\(number)")
    }

    /// The file is gone (`missingSince` is set): hidden from lists unless a filter asks for `missing`.
    public var missing: Bool { missingSince != nil }

    /// Creates a track; only the path is required, everything else has the value of an untagged file.
    public init(
        id: TrackID = .unassigned, path: String, fileSize: Int64 = 0, fileModified: Date? = nil,
        title: String? = nil, artist: String? = nil, album: String? = nil, albumArtist: String? = nil,
        composer: String? = nil, genre: String? = nil, year: Int? = nil, trackNumber: Int? = nil,
        trackCount: Int? = nil, discNumber: Int? = nil, discCount: Int? = nil, duration: Double? = nil,
        bitrate: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil, codec: String? = nil,
        compilation: Bool = false, comment: String? = nil, lyrics: String? = nil, sortTitle: String? = nil,
        sortArtist: String? = nil, sortAlbum: String? = nil, sortAlbumArtist: String? = nil,
        sortComposer: String? = nil, artworkID: ArtworkID? = nil, dateAdded: Date = Date(),
        dateModified: Date? = nil, playCount: Int = 0, skipCount: Int = 0, lastPlayed: Date? = nil,
        rating: Int = 0, audioHash: String? = nil, details: TrackDetails = TrackDetails(), missingSince: Date? = nil
    ) {
        self.id = id
        self.path = path
        self.fileSize = fileSize
        self.fileModified = fileModified
        self.title = title
        self.artist = artist
        self.album = album
        self.albumArtist = albumArtist
        self.composer = composer
        self.genre = genre
        self.year = year
        self.trackNumber = trackNumber
        self.trackCount = trackCount
        self.discNumber = discNumber
        self.discCount = discCount
        self.duration = duration
        self.bitrate = bitrate
        self.sampleRate = sampleRate
        self.channels = channels
        self.codec = codec
        self.compilation = compilation
        self.comment = comment
        self.lyrics = lyrics
        self.sortTitle = sortTitle
        self.sortArtist = sortArtist
        self.sortAlbum = sortAlbum
        self.sortAlbumArtist = sortAlbumArtist
        self.sortComposer = sortComposer
        self.artworkID = artworkID
        self.dateAdded = dateAdded
        self.dateModified = dateModified ?? dateAdded
        self.playCount = playCount
        self.skipCount = skipCount
        self.lastPlayed = lastPlayed
        self.rating = rating
        self.audioHash = audioHash
        self.details = details
        self.missingSince = missingSince
    }

    enum CodingKeys: String, CodingKey {
        case id, path, fileSize, fileModified, title, artist, album, albumArtist, composer, genre, year
        case trackNumber, trackCount, discNumber, discCount, duration, bitrate, sampleRate, channels, codec
        case compilation, comment, lyrics, sortTitle, sortArtist, sortAlbum, sortAlbumArtist, sortComposer
        case artworkID, hasArtwork, dateAdded, dateModified, playCount, skipCount, lastPlayed, rating, audioHash
        case artists, albumArtists, genres, composers, moods, contributors, musicBrainz, replayGain, originalDate
        case releaseDate, releaseTypes, releaseStatus, labels, catalogNumbers, barcode, isrcs, bpm, discSubtitle, media
        case releaseCountry, albumVersion, bitDepth, missing, missingSince, cue
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // `hasArtwork` is derived, so it is ignored on input; counters and dates default like init's.
        let added = try c.decodeIfPresent(Date.self, forKey: .dateAdded) ?? Date()
        self.init(
            id: try c.decodeIfPresent(TrackID.self, forKey: .id) ?? .unassigned,
            path: try c.decode(String.self, forKey: .path),
            fileSize: try c.decodeIfPresent(Int64.self, forKey: .fileSize) ?? 0,
            fileModified: try c.decodeIfPresent(Date.self, forKey: .fileModified),
            title: try c.decodeIfPresent(String.self, forKey: .title),
            artist: try c.decodeIfPresent(String.self, forKey: .artist),
            album: try c.decodeIfPresent(String.self, forKey: .album),
            albumArtist: try c.decodeIfPresent(String.self, forKey: .albumArtist),
            composer: try c.decodeIfPresent(String.self, forKey: .composer),
            genre: try c.decodeIfPresent(String.self, forKey: .genre),
            year: try c.decodeIfPresent(Int.self, forKey: .year),
            trackNumber: try c.decodeIfPresent(Int.self, forKey: .trackNumber),
            trackCount: try c.decodeIfPresent(Int.self, forKey: .trackCount),
            discNumber: try c.decodeIfPresent(Int.self, forKey: .discNumber),
            discCount: try c.decodeIfPresent(Int.self, forKey: .discCount),
            duration: try c.decodeIfPresent(Double.self, forKey: .duration),
            bitrate: try c.decodeIfPresent(Int.self, forKey: .bitrate),
            sampleRate: try c.decodeIfPresent(Int.self, forKey: .sampleRate),
            channels: try c.decodeIfPresent(Int.self, forKey: .channels),
            codec: try c.decodeIfPresent(String.self, forKey: .codec),
            compilation: try c.decodeIfPresent(Bool.self, forKey: .compilation) ?? false,
            comment: try c.decodeIfPresent(String.self, forKey: .comment),
            lyrics: try c.decodeIfPresent(String.self, forKey: .lyrics),
            sortTitle: try c.decodeIfPresent(String.self, forKey: .sortTitle),
            sortArtist: try c.decodeIfPresent(String.self, forKey: .sortArtist),
            sortAlbum: try c.decodeIfPresent(String.self, forKey: .sortAlbum),
            sortAlbumArtist: try c.decodeIfPresent(String.self, forKey: .sortAlbumArtist),
            sortComposer: try c.decodeIfPresent(String.self, forKey: .sortComposer),
            artworkID: try c.decodeIfPresent(ArtworkID.self, forKey: .artworkID),
            dateAdded: added,
            dateModified: try c.decodeIfPresent(Date.self, forKey: .dateModified),
            playCount: try c.decodeIfPresent(Int.self, forKey: .playCount) ?? 0,
            skipCount: try c.decodeIfPresent(Int.self, forKey: .skipCount) ?? 0,
            lastPlayed: try c.decodeIfPresent(Date.self, forKey: .lastPlayed),
            rating: try c.decodeIfPresent(Int.self, forKey: .rating) ?? 0,
            audioHash: try c.decodeIfPresent(String.self, forKey: .audioHash),
            details: try Self.decodeDetails(c))
    }

    private static func decodeDetails(_ c: KeyedDecodingContainer<CodingKeys>) throws -> TrackDetails {
        var d = TrackDetails()
        func list(_ key: CodingKeys) throws -> [String] { try c.decodeIfPresent([String].self, forKey: key) ?? [] }
        func text(_ key: CodingKeys) throws -> String? { try c.decodeIfPresent(String.self, forKey: key) }
        d.artists = try list(.artists)
        d.albumArtists = try list(.albumArtists)
        d.genres = try list(.genres)
        d.composers = try list(.composers)
        d.moods = try list(.moods)
        d.contributors = try c.decodeIfPresent([Contributor].self, forKey: .contributors) ?? []
        d.musicBrainz = try c.decodeIfPresent(MusicBrainzIDs.self, forKey: .musicBrainz) ?? MusicBrainzIDs()
        d.replayGain = try c.decodeIfPresent(ReplayGain.self, forKey: .replayGain)
        d.originalDate = try text(.originalDate)
        d.releaseDate = try text(.releaseDate)
        d.releaseTypes = try list(.releaseTypes)
        d.releaseStatus = try text(.releaseStatus)
        d.labels = try list(.labels)
        d.catalogNumbers = try list(.catalogNumbers)
        d.barcode = try text(.barcode)
        d.isrcs = try list(.isrcs)
        d.bpm = try c.decodeIfPresent(Int.self, forKey: .bpm)
        d.discSubtitle = try text(.discSubtitle)
        d.media = try text(.media)
        d.releaseCountry = try text(.releaseCountry)
        d.albumVersion = try text(.albumVersion)
        d.bitDepth = try c.decodeIfPresent(Int.self, forKey: .bitDepth)
        return d
    }

    /// Writes every property, with absent optionals as JSON `null` so that a script sees the whole
    /// shape of a track whatever it holds.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(path, forKey: .path)
        try c.encode(fileSize, forKey: .fileSize)
        try c.encode(fileModified, forKey: .fileModified)
        try c.encode(title, forKey: .title)
        try c.encode(artist, forKey: .artist)
        try c.encode(album, forKey: .album)
        try c.encode(albumArtist, forKey: .albumArtist)
        try c.encode(composer, forKey: .composer)
        try c.encode(genre, forKey: .genre)
        try c.encode(year, forKey: .year)
        try c.encode(trackNumber, forKey: .trackNumber)
        try c.encode(trackCount, forKey: .trackCount)
        try c.encode(discNumber, forKey: .discNumber)
        try c.encode(discCount, forKey: .discCount)
        try c.encode(duration, forKey: .duration)
        try c.encode(bitrate, forKey: .bitrate)
        try c.encode(sampleRate, forKey: .sampleRate)
        try c.encode(channels, forKey: .channels)
        try c.encode(codec, forKey: .codec)
        try c.encode(compilation, forKey: .compilation)
        try c.encode(comment, forKey: .comment)
        try c.encode(lyrics, forKey: .lyrics)
        try c.encode(sortTitle, forKey: .sortTitle)
        try c.encode(sortArtist, forKey: .sortArtist)
        try c.encode(sortAlbum, forKey: .sortAlbum)
        try c.encode(sortAlbumArtist, forKey: .sortAlbumArtist)
        try c.encode(sortComposer, forKey: .sortComposer)
        try c.encode(artworkID, forKey: .artworkID)
        try c.encode(hasArtwork, forKey: .hasArtwork)
        try c.encode(dateAdded, forKey: .dateAdded)
        try c.encode(dateModified, forKey: .dateModified)
        try c.encode(playCount, forKey: .playCount)
        try c.encode(skipCount, forKey: .skipCount)
        try c.encode(lastPlayed, forKey: .lastPlayed)
        try c.encode(rating, forKey: .rating)
        try c.encode(audioHash, forKey: .audioHash)
        try c.encode(missing, forKey: .missing)
        try c.encode(missingSince, forKey: .missingSince)
        try c.encode(details.cue, forKey: .cue)
        let d = details
        try c.encode(d.artists, forKey: .artists)
        try c.encode(d.albumArtists, forKey: .albumArtists)
        try c.encode(d.genres, forKey: .genres)
        try c.encode(d.composers, forKey: .composers)
        try c.encode(d.moods, forKey: .moods)
        try c.encode(d.contributors, forKey: .contributors)
        try c.encode(d.musicBrainz, forKey: .musicBrainz)
        try c.encode(d.replayGain, forKey: .replayGain)
        try c.encode(d.originalDate, forKey: .originalDate)
        try c.encode(d.releaseDate, forKey: .releaseDate)
        try c.encode(d.releaseTypes, forKey: .releaseTypes)
        try c.encode(d.releaseStatus, forKey: .releaseStatus)
        try c.encode(d.labels, forKey: .labels)
        try c.encode(d.catalogNumbers, forKey: .catalogNumbers)
        try c.encode(d.barcode, forKey: .barcode)
        try c.encode(d.isrcs, forKey: .isrcs)
        try c.encode(d.bpm, forKey: .bpm)
        try c.encode(d.discSubtitle, forKey: .discSubtitle)
        try c.encode(d.media, forKey: .media)
        try c.encode(d.releaseCountry, forKey: .releaseCountry)
        try c.encode(d.albumVersion, forKey: .albumVersion)
        try c.encode(d.bitDepth, forKey: .bitDepth)
    }
}

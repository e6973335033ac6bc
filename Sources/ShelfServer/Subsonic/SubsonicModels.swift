import Foundation
import Shelf
import ShelfCore

/// One of the spec's response types: it writes its attributes and children inside an element
/// its caller opened (the same song is a `song`, an `entry` or a `child` by where it stands).
protocol SubsonicModel: Sendable {
    /// Writes this value's attributes, then its text or children.
    func write(to w: inout SubsonicWriter)
}

extension SubsonicWriter {
    /// A directory's `child` list: its directories (albums or folders), then its songs.
    mutating func children(_ directories: [some SubsonicModel], _ songs: [SubsonicSong]) {
        openList("child")
        for directory in directories {
            item()
            directory.write(to: &self)
            close()
        }
        for song in songs {
            item()
            song.write(to: &self)
            close()
        }
        closeList()
    }

    /// `model` as the single element `name`.
    mutating func element(_ name: String, _ model: some SubsonicModel) {
        open(name)
        model.write(to: &self)
        close()
    }

    /// `models` as a list of `name` elements (nothing at all in JSON when there are none).
    mutating func list(_ name: String, _ models: [some SubsonicModel]) {
        openList(name)
        for model in models {
            item()
            model.write(to: &self)
            close()
        }
        closeList()
    }

    /// An element `name` that holds only the list `members` of `models` (`<genres><genre/>…</genres>`).
    mutating func container(_ name: String, _ members: String, _ models: [some SubsonicModel]) {
        open(name)
        list(members, models)
        close()
    }
}

/// The names sent for a blank album or artist: apps make folders and list rows of these names,
/// and some drop or crash on an empty one (or on an album without an artist).
enum SubsonicPlaceholder {
    static let artist = "[Unknown Artist]"
    static let album = "[Unknown Album]"

    /// `name`, or `placeholder` when it is missing or only white space.
    static func name(_ name: String?, _ placeholder: String) -> String {
        guard let name, name.contains(where: { !$0.isWhitespace }) else { return placeholder }
        return name
    }
}

/// Shelf rates 0–100; Subsonic 1–5 (0: unrated).
func subsonicStars(_ rating: Int?) -> Int { min(5, max(0, Int(((Double(rating ?? 0)) / 20).rounded()))) }

/// A song (the spec's Child): a track with one user's star, rating and plays.
struct SubsonicSong: SubsonicModel {
    /// The track as read (without lyrics).
    let track: Track
    /// The user's own data on it.
    let data: UserTrackData?
    /// The album and album-artist rows it files under.
    let ids: TrackGroupIDs
    /// getNowPlaying's extra fields: who, how many minutes ago, on which client.
    var nowPlaying: (user: String, minutesAgo: Int, player: String)?
    /// In a folder listing: the folder as `parent`, and the file's path under its library's root
    /// as `path` (elsewhere the parent is the album and the path the file's name).
    var folder: (parent: SubsonicID, path: String)?

    /// The song of `track` for a user.
    init(_ track: Track, _ data: UserTrackData?, ids: TrackGroupIDs? = nil) {
        self.track = track
        self.data = data
        self.ids = ids ?? Library.groupIDs(of: track)
    }

    func write(to w: inout SubsonicWriter) {
        // The name and extension by hand, on UTF-8 (both separators are ASCII): NSString's path
        // methods normalise the whole path first, and Character searches compare graphemes.
        let path = track.filePath
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let file = slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path
        let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")).flatMap { $0 == file.startIndex ? nil : $0 }
        // A track cut from an image streams as FLAC, and is about its share of the image.
        let cut = track.details.cue != nil
        let suffix = cut ? "flac" : dot.map { file[file.utf8.index(after: $0)...].lowercased() } ?? ""
        let album = ids.album.map { SubsonicID.album($0) }
        w.attribute("id", SubsonicID.track(track.id))
        w.attribute("parent", folder?.parent ?? album)
        w.attribute("isDir", false)
        w.attribute("title", track.title ?? dot.map { String(file[..<$0]) } ?? file)
        w.attribute("album", SubsonicPlaceholder.name(track.album, SubsonicPlaceholder.album))
        w.attribute("artist", SubsonicPlaceholder.name(track.artist, SubsonicPlaceholder.artist))
        w.attribute("track", track.trackNumber)
        w.attribute("year", track.year)
        w.attribute("genre", track.genre)
        if track.artworkID != nil { w.attribute("coverArt", SubsonicID.track(track.id)) }
        let size = cut ? track.duration.flatMap { duration in track.bitrate.map { Int(duration * Double($0) * 125) } } : Int(track.fileSize)
        w.attribute("size", size)
        w.attribute("contentType", cut ? "audio/flac" : StreamResponder.mimeType(suffix: suffix, codec: track.codec))
        w.attribute("suffix", suffix)
        // Whole seconds, but a decodable file of under half a second is 1, not 0: apps drop songs
        // without a duration.
        w.attribute("duration", track.duration.map { $0 > 0 ? max(1, Int($0.rounded())) : 0 })
        w.attribute("bitRate", track.bitrate)
        w.attribute("path", folder?.path ?? file)
        w.attribute("discNumber", track.discNumber)
        w.attribute("created", track.dateAdded)
        w.attribute("albumId", album)
        w.attribute("artistId", ids.albumArtist.map { SubsonicID.artist($0) })
        w.attribute("type", "music")
        w.attribute("mediaType", "song")
        w.attribute("isVideo", false)
        w.attribute("playCount", data?.playCount ?? 0)
        w.attribute("played", data?.lastPlayed)
        w.attribute("userRating", data?.rating.map { subsonicStars($0) })
        w.attribute("starred", data?.starred)
        w.attribute("sortName", track.sortTitle ?? "")
        w.attribute("samplingRate", track.sampleRate)
        w.attribute("channelCount", track.channels)
        if let comment = track.comment, !comment.isEmpty { w.attribute("comment", comment) }
        let d = track.details
        w.attribute("bitDepth", d.bitDepth)
        w.attribute("bpm", d.bpm)
        w.attribute("musicBrainzId", d.musicBrainz.recordingID)
        w.attribute("displayArtist", SubsonicPlaceholder.name(track.artist, SubsonicPlaceholder.artist))
        w.attribute("displayAlbumArtist", SubsonicPlaceholder.name(track.albumArtist ?? track.artist, SubsonicPlaceholder.artist))
        let composers = d.composers.isEmpty ? (track.composer.map { [$0] } ?? []) : d.composers
        if !composers.isEmpty { w.attribute("displayComposer", composers.joined(separator: ", ")) }
        if let nowPlaying {
            w.attribute("username", nowPlaying.user)
            w.attribute("minutesAgo", nowPlaying.minutesAgo)
            w.attribute("playerId", 0)
            w.attribute("playerName", nowPlaying.player)
        }
        // OpenSubsonic's lists: each credited name with the artist ID every track and album
        // crediting it shares (the album-artist view's, from the name's key).
        // The owner's name has its ID already (`ids`): a sync page of 500 songs then hashes no
        // name key for the common song whose artist is its album's artist.
        // Names are told apart by their MusicBrainz IDs, as the views key them.
        let ownerIsAlbumArtist = !SortKey.isBlank(track.albumArtist)
        let owner = track.compilation ? nil : (ownerIsAlbumArtist ? track.albumArtist : track.artist)
        let ownerID = ownerIsAlbumArtist ? d.displayAlbumArtistID : d.displayArtistID
        func refs(_ names: [String], _ mbids: [String]) -> [SubsonicArtistRef] {
            names.indices.map { index in
                let mbid = mbids.count == names.count ? mbids[index] : nil
                let name = names[index]
                return SubsonicArtistRef(name: name, id: name == owner && mbid == ownerID ? ids.albumArtist : nil, musicBrainzID: mbid)
            }
        }
        w.openSubsonic { w in
            let artists = d.artists.isEmpty ? (track.artist.map { [$0] } ?? []) : d.artists
            w.list("artists", refs(artists, d.artists.isEmpty ? (d.displayArtistID.map { [$0] } ?? []) : d.musicBrainz.artistIDs))
            let albumArtists = d.albumArtists.isEmpty ? ((track.albumArtist ?? track.artist).map { [$0] } ?? []) : d.albumArtists
            let albumArtistIDs =
                !d.albumArtists.isEmpty
                ? d.musicBrainz.albumArtistIDs : ((SortKey.isBlank(track.albumArtist) ? d.displayArtistID : d.displayAlbumArtistID).map { [$0] } ?? [])
            w.list("albumArtists", refs(albumArtists, albumArtistIDs))
            let genres = d.genres.isEmpty ? (track.genre.map { [$0] } ?? []) : d.genres
            w.list("genres", genres.map { SubsonicNamed(name: $0) })
            w.strings("moods", d.moods)
            w.strings("isrc", d.isrcs)
            var credits = composers.map { Contributor(role: "composer", name: $0) }
            credits += d.contributors
            w.list(
                "contributors",
                credits.map { SubsonicContributor(credit: $0, musicBrainzID: SortKey.musicBrainzID(ofKey: SortKey.contributorKey($0.name, of: track))) })
            if let gain = d.replayGain { w.element("replayGain", SubsonicReplayGain(gain: gain)) }
        }
    }
}

/// An artist as a song's or album's `artists` member: its ID and name (OpenSubsonic's ArtistID3).
struct SubsonicArtistRef: SubsonicModel {
    let name: String
    /// The name's ID when the caller knows it (else computed from the name and `musicBrainzID`).
    var id: GroupID?
    /// The artist's MusicBrainz ID as tagged, which tells two artists of one name apart.
    var musicBrainzID: String? = nil

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", SubsonicID.artist(id ?? Library.artistID(named: name, musicBrainzID: musicBrainzID)))
        w.attribute("name", name)
    }
}

/// A member that is only a name: a genre of `genres` (OpenSubsonic's ItemGenre), a label of
/// `recordLabels` (RecordLabel).
struct SubsonicNamed: SubsonicModel {
    let name: String

    func write(to w: inout SubsonicWriter) { w.attribute("name", name) }
}

/// A credit in a role (OpenSubsonic's Contributor): role, the part played, the artist.
struct SubsonicContributor: SubsonicModel {
    let credit: Contributor
    /// The MusicBrainz ID of the track's artist of that name, when it has one
    /// (`SortKey.contributorKey`): the credit then leads to that artist.
    var musicBrainzID: String? = nil

    func write(to w: inout SubsonicWriter) {
        w.attribute("role", credit.role)
        w.attribute("subRole", credit.subRole)
        w.element("artist", SubsonicArtistRef(name: credit.name, musicBrainzID: musicBrainzID))
    }
}

/// A song's ReplayGain as tagged (OpenSubsonic's ReplayGain; gains in dB, peaks linear).
struct SubsonicReplayGain: SubsonicModel {
    let gain: ReplayGain

    func write(to w: inout SubsonicWriter) {
        if let v = gain.trackGain { w.attribute("trackGain", v) }
        if let v = gain.albumGain { w.attribute("albumGain", v) }
        if let v = gain.trackPeak { w.attribute("trackPeak", v) }
        if let v = gain.albumPeak { w.attribute("albumPeak", v) }
    }
}

/// An album (AlbumID3), from its view row; `child` adds the folder-style fields (`title`,
/// `isDir`, `parent`) that getAlbumList, search2, getStarred and getMusicDirectory send.
struct SubsonicAlbum: SubsonicModel {
    let item: GroupItem
    var child = false
    /// When its first track was added (the spec requires it).
    var created: Date?
    var starred: Date?
    /// getAlbum's songs.
    var songs: [SubsonicSong]?
    /// In a list of albums: the album's first track, whose tags give the release's fields.
    var release: Track?

    func write(to w: inout SubsonicWriter) {
        let artist = item.artistID.map { SubsonicID.artist($0) }
        let name = SubsonicPlaceholder.name(item.name, SubsonicPlaceholder.album)
        w.attribute("id", SubsonicID.album(item.id))
        w.attribute("name", name)
        if child {
            w.attribute("title", name)
            w.attribute("isDir", true)
            w.attribute("parent", artist)
        }
        w.attribute("artist", SubsonicPlaceholder.name(item.artist, SubsonicPlaceholder.artist))
        w.attribute("artistId", artist)
        if SubsonicAPI.hasPicture(item) { w.attribute("coverArt", SubsonicID.album(item.id)) }
        w.attribute("songCount", item.trackCount)
        w.attribute("duration", Int(item.duration.rounded()))
        w.attribute("created", created)
        w.attribute("year", item.year)
        w.attribute("genre", item.genre)
        w.attribute("starred", starred)
        // The sort tag the engine sorts the album by, else the name it sorts by then.
        w.attribute("sortName", item.sortName ?? name)
        // What OpenSubsonic adds to an album, from its tracks' tags: the release's details as its
        // first track carries them, lists over every track (getAlbum has them all; a list of
        // albums reads each album's first track only).
        let tracks = songs?.map(\.track) ?? release.map { [$0] } ?? []
        if !tracks.isEmpty {
            // getAlbum: the first track in disc and track order; a list: the lowest-ID track, the
            // one the view row names (for an album imported from its folder, the same track).
            let first = tracks.first?.details ?? TrackDetails()
            w.attribute("isCompilation", tracks.contains { $0.compilation })
            w.attribute("musicBrainzId", first.musicBrainz.releaseID)
            w.attribute("version", first.albumVersion)
            let credited = first.albumArtists.isEmpty ? [SubsonicPlaceholder.name(item.artist, SubsonicPlaceholder.artist)] : first.albumArtists
            let creditedIDs = first.albumArtists.count == first.musicBrainz.albumArtistIDs.count ? first.musicBrainz.albumArtistIDs : []
            w.attribute("displayArtist", SubsonicPlaceholder.name(item.artist, SubsonicPlaceholder.artist))
            // The album's own artist has its ID on the row already: a page of 500 albums then
            // keys no name for the common album credited to its album artist alone.
            w.openSubsonic { w in
                w.list(
                    "artists",
                    credited.indices.map { index in
                        let name = credited[index]
                        let mbid = creditedIDs.isEmpty ? nil : creditedIDs[index]
                        return SubsonicArtistRef(name: name, id: name == item.artist && creditedIDs.isEmpty ? item.artistID : nil, musicBrainzID: mbid)
                    })
                // Unions over every track: getAlbum only (a list reads one track per album).
                if songs != nil {
                    w.list(
                        "genres",
                        Self.union(tracks.map { $0.details.genres.isEmpty ? ($0.genre.map { [$0] } ?? []) : $0.details.genres }).map { SubsonicNamed(name: $0) }
                    )
                    w.strings("moods", Self.union(tracks.map(\.details.moods)))
                }
                w.strings("releaseTypes", first.releaseTypes)
                w.list("recordLabels", first.labels.map { SubsonicNamed(name: $0) })
                if let date = first.originalDate.flatMap(SubsonicItemDate.init) { w.element("originalReleaseDate", date) }
                if let date = first.releaseDate.flatMap(SubsonicItemDate.init) { w.element("releaseDate", date) }
            }
        }
        if let songs {
            w.openSubsonic { w in
                var titles: [Int: String] = [:]
                for track in tracks {
                    if let disc = track.discNumber, let title = track.details.discSubtitle, titles[disc] == nil { titles[disc] = title }
                }
                w.list("discTitles", titles.sorted { $0.key < $1.key }.map { SubsonicDiscTitle(disc: $0.key, title: $0.value) })
            }
            w.list("song", songs)
        }
    }

    /// Every value of the lists, each once, in the order first met.
    static func union(_ lists: [[String]]) -> [String] {
        var seen = Set<String>()
        return lists.joined().filter { seen.insert($0).inserted }
    }
}

/// A date as tagged, in parts (OpenSubsonic's ItemDate): "1969", "1969-09" or "1969-09-26".
struct SubsonicItemDate: SubsonicModel {
    let year: Int
    let month: Int?
    let day: Int?

    init?(_ text: String) {
        let parts = text.split(separator: "-").map { Int($0) }
        guard let year = parts.first ?? nil else { return nil }
        self.year = year
        month = parts.count > 1 ? parts[1] : nil
        day = parts.count > 2 ? parts[2] : nil
    }

    func write(to w: inout SubsonicWriter) {
        w.attribute("year", year)
        w.attribute("month", month)
        w.attribute("day", day)
    }
}

/// A disc's subtitle (OpenSubsonic's DiscTitle).
struct SubsonicDiscTitle: SubsonicModel {
    let disc: Int
    let title: String

    func write(to w: inout SubsonicWriter) {
        w.attribute("disc", disc)
        w.attribute("title", title)
    }
}

/// An artist (ArtistID3), from its album-artist view row; getArtist adds its albums.
struct SubsonicArtist: SubsonicModel {
    let item: GroupItem
    var starred: Date?
    var albums: [SubsonicAlbum]?
    /// OpenSubsonic's roles in the library (`albumartist`, and `artist` when tracks credit it too).
    var roles: [String]?
    /// The artist's MusicBrainz ID, from its first track's album-artist IDs (getArtist).
    var musicBrainzId: String?

    func write(to w: inout SubsonicWriter) {
        let name = SubsonicPlaceholder.name(item.name, SubsonicPlaceholder.artist)
        w.attribute("id", SubsonicID.artist(item.id))
        w.attribute("name", name)
        if SubsonicAPI.hasPicture(item) { w.attribute("coverArt", SubsonicID.artist(item.id)) }
        w.attribute("albumCount", item.albumCount)
        w.attribute("starred", starred)
        w.attribute("sortName", item.sortName ?? name)
        w.attribute("musicBrainzId", musicBrainzId)
        if let roles { w.openSubsonic { $0.strings("roles", roles) } }
        if let albums { w.list("album", albums) }
    }
}

/// One letter of getArtists and getIndexes: its name and its artists (or, browsing folders,
/// its folders, which the spec lists as `artist` too).
struct SubsonicIndex<Entry: SubsonicModel>: SubsonicModel {
    let name: String
    var artists: [Entry]

    func write(to w: inout SubsonicWriter) {
        w.attribute("name", name)
        w.list("artist", artists)
    }
}

/// A folder as a directory entry: in getIndexes' index (`artist`) and among a getMusicDirectory's
/// children (`isDir`).
struct SubsonicFolderEntry: SubsonicModel {
    let folder: Folder
    /// Among a directory's children (the Child shape) rather than in the index (the Artist one).
    var child = false

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", SubsonicID.folder(folder.id))
        if child {
            w.attribute("parent", folder.parent.map { SubsonicID.folder($0) })
            w.attribute("isDir", true)
            w.attribute("title", folder.name)
            w.attribute("path", folder.relativePath)
        } else {
            w.attribute("name", folder.name)
        }
        if folder.artworkID != nil { w.attribute("coverArt", SubsonicID.folder(folder.id)) }
    }
}

/// getMusicDirectory of a folder: its child folders, then its songs.
struct SubsonicFolderDirectory: SubsonicModel {
    let folder: Folder
    var folders: [SubsonicFolderEntry]
    var songs: [SubsonicSong]

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", SubsonicID.folder(folder.id))
        w.attribute("name", folder.name)
        w.attribute("parent", folder.parent.map { SubsonicID.folder($0) })
        if folder.artworkID != nil { w.attribute("coverArt", SubsonicID.folder(folder.id)) }
        w.attribute("childCount", folders.count + songs.count)
        w.children(folders, songs)
    }
}

/// A genre: its counts, and its name as the element's text.
struct SubsonicGenre: SubsonicModel {
    let name: String
    let songCount: Int
    let albumCount: Int

    func write(to w: inout SubsonicWriter) {
        w.attribute("songCount", songCount)
        w.attribute("albumCount", albumCount)
        w.text(name)
    }
}

/// A playlist; getPlaylist adds its songs (`entry`).
struct SubsonicPlaylist: SubsonicModel {
    let id: PlaylistID
    let name: String
    let owner: String
    let isPublic: Bool
    let songCount: Int
    let duration: Int
    var comment: String?
    let created: Date
    let changed: Date
    let hasCover: Bool
    let readOnly: Bool
    var entries: [SubsonicSong]?

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", SubsonicID.playlist(id))
        w.attribute("name", name)
        w.attribute("comment", comment)
        w.attribute("owner", owner)
        w.attribute("public", isPublic)
        w.attribute("songCount", songCount)
        w.attribute("duration", duration)
        w.attribute("created", created)
        w.attribute("changed", changed)
        if hasCover { w.attribute("coverArt", SubsonicID.playlist(id)) }
        if readOnly { w.attribute("readonly", true) }
        if let entries { w.list("entry", entries) }
    }
}

/// A music folder of getMusicFolders.
struct SubsonicMusicFolder: SubsonicModel {
    let id: Int
    let name: String

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", id)
        w.attribute("name", name)
    }
}

/// getMusicDirectory's directory: an artist's holds its albums, an album's its songs.
struct SubsonicDirectory: SubsonicModel {
    let id: SubsonicID
    let name: String
    var parent: SubsonicID?
    var albumCount: Int?
    var songCount: Int?
    var albums: [SubsonicAlbum] = []
    var songs: [SubsonicSong] = []

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", id)
        w.attribute("name", name)
        w.attribute("parent", parent)
        w.attribute("albumCount", albumCount)
        w.attribute("songCount", songCount)
        w.children(albums, songs)
    }
}

/// getLyrics' answer: the song's artist and title, and the plain lyrics as text (empty when none).
struct SubsonicLyrics: SubsonicModel {
    var artist: String?
    var title: String?
    let text: String

    func write(to w: inout SubsonicWriter) {
        w.attribute("artist", artist)
        w.attribute("title", title)
        w.text(text)
    }
}

/// One line of structured lyrics: its start in milliseconds when synced, and its text.
struct SubsonicLyricLine: SubsonicModel {
    var start: Int?
    let text: String

    func write(to w: inout SubsonicWriter) {
        w.attribute("start", start)
        w.text(text)
    }
}

/// The songLyrics extension's structuredLyrics: one language of one song's lyrics.
struct SubsonicStructuredLyrics: SubsonicModel {
    var displayArtist: String?
    var displayTitle: String?
    var lang = "xxx"
    let synced: Bool
    var offset = 0
    let lines: [SubsonicLyricLine]
    /// songLyrics v2 with `enhanced=true`: the layer (`main`), and word timings of enhanced LRC.
    var kind: String?
    var cueLines: [SubsonicCueLine] = []

    func write(to w: inout SubsonicWriter) {
        w.attribute("displayArtist", displayArtist)
        w.attribute("displayTitle", displayTitle)
        if let kind { w.attribute("kind", kind) }
        w.attribute("lang", lang)
        w.attribute("synced", synced)
        w.attribute("offset", offset)
        w.list("line", lines)
        w.list("cueLine", cueLines)
    }
}

/// songLyrics v2: one line's timed words (`cue`s, with inclusive UTF-8 byte ranges into `value`).
struct SubsonicCueLine: SubsonicModel {
    /// The line it times, from 0.
    let index: Int
    let start: Int
    /// The last cue's end, when the cues have ends.
    let end: Int?
    let value: String
    let cues: [Cue]

    /// One timed word or syllable.
    struct Cue: SubsonicModel {
        let start: Int
        let end: Int?
        let byteStart: Int
        let byteEnd: Int
        let value: String

        func write(to w: inout SubsonicWriter) {
            w.attribute("start", start)
            w.attribute("end", end)
            w.attribute("byteStart", byteStart)
            w.attribute("byteEnd", byteEnd)
            w.text(value)
        }
    }

    func write(to w: inout SubsonicWriter) {
        w.attribute("index", index)
        w.attribute("start", start)
        w.attribute("end", end)
        w.attribute("value", value)
        w.list("cue", cues)
    }
}

/// A saved play queue: the song playing, where in it, who saved it when from which client, the songs.
struct SubsonicPlayQueue: SubsonicModel {
    var current: TrackID?
    /// getPlayQueueByIndex's place of the current song instead of its ID.
    var currentIndex: Int? = nil
    let position: Int
    let username: String
    let changed: Date
    let changedBy: String
    let entries: [SubsonicSong]

    func write(to w: inout SubsonicWriter) {
        w.attribute("current", current.map { SubsonicID.track($0) })
        w.attribute("currentIndex", currentIndex)
        w.attribute("position", position)
        w.attribute("username", username)
        w.attribute("changed", changed)
        w.attribute("changedBy", changedBy)
        w.list("entry", entries)
    }
}

/// getScanStatus and startScan: whether a scan runs, its count, and its total while it runs.
struct SubsonicScanStatus: SubsonicModel {
    let scanning: Bool
    let count: Int
    var total: Int?

    func write(to w: inout SubsonicWriter) {
        w.attribute("scanning", scanning)
        w.attribute("count", count)
        w.attribute("total", total)
    }
}

/// One OpenSubsonic extension and the versions of it served.
struct SubsonicExtension: SubsonicModel {
    let name: String
    let versions: [Int]

    func write(to w: inout SubsonicWriter) {
        w.attribute("name", name)
        w.openList("versions")
        for version in versions { w.bareItem(version) }
        w.closeList()
    }
}

/// getLicense: always valid.
struct SubsonicLicense: SubsonicModel {
    func write(to w: inout SubsonicWriter) { w.attribute("valid", true) }
}

/// tokenInfo (apiKeyAuthentication): whose key it is.
struct SubsonicTokenInfo: SubsonicModel {
    let username: String

    func write(to w: inout SubsonicWriter) { w.attribute("username", username) }
}

/// The error of a failed answer: the protocol's code and a message for people.
struct SubsonicErrorBody: SubsonicModel {
    let code: Int
    let message: String

    func write(to w: inout SubsonicWriter) {
        w.attribute("code", code)
        w.attribute("message", message)
    }
}

/// An element with nothing in it (artistInfo2 and albumInfo: Shelf keeps no biographies).
struct SubsonicEmpty: SubsonicModel {
    func write(to w: inout SubsonicWriter) {}
}

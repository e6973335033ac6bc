import Foundation
import Shelf
import ShelfCore

/// The protocol's element shapes (song, album, artist, playlist) built from the engine's values.
extension SubsonicAPI {
    /// `2026-12-01T10:02:38Z`, formatted by hand: a sync formats three dates per song, and a
    /// formatter object per call costs more than the rest of the song.
    static func iso(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Shelf rates 0–100; Subsonic 1–5 (0: unrated).
    static func stars(_ rating: Int?) -> Int { min(5, max(0, Int(((Double(rating ?? 0)) / 20).rounded()))) }

    /// A `song` (Child) element: the track with this user's star, rating and plays.
    static func song(_ track: Track, _ data: UserTrackData?, name: String = "song", ids known: TrackGroupIDs? = nil) -> SubsonicElement {
        let ids = known ?? Library.groupIDs(of: track)
        // The name and extension by hand, on UTF-8 (both separators are ASCII): NSString's path
        // methods normalise the whole path first, and Character searches compare graphemes.
        let path = track.path
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let file = slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path
        let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")).flatMap { $0 == file.startIndex ? nil : $0 }
        let stem = dot.map { String(file[..<$0]) } ?? file
        let suffix = dot.map { file[file.utf8.index(after: $0)...].lowercased() } ?? ""
        // Appended as they are known, without an array of optionals to filter: a sync page is
        // 500 songs of some 30 attributes.
        var attributes: [(String, SubsonicValue)] = []
        attributes.reserveCapacity(32)
        func add(_ key: String, _ value: SubsonicValue?) { if let value { attributes.append((key, value)) } }
        let album = ids.album.map { SubsonicValue.string(SubsonicID.album($0).description) }
        add("id", .string(SubsonicID.track(track.id).description))
        add("parent", album)
        add("isDir", .bool(false))
        add("title", .string(track.title ?? stem))
        add("album", track.album.map { .string($0) })
        add("artist", track.artist.map { .string($0) })
        add("track", track.trackNumber.map { .int($0) })
        add("year", track.year.map { .int($0) })
        add("genre", track.genre.map { .string($0) })
        add("coverArt", track.artworkID == nil ? nil : .string(SubsonicID.track(track.id).description))
        add("size", .int(Int(track.fileSize)))
        add("contentType", .string(StreamResponder.mimeType(suffix: suffix, codec: track.codec)))
        add("suffix", .string(suffix))
        add("duration", track.duration.map { .int(Int($0.rounded())) })
        add("bitRate", track.bitrate.map { .int($0) })
        add("path", .string(file))
        add("discNumber", track.discNumber.map { .int($0) })
        add("created", .string(iso(track.dateAdded)))
        add("albumId", album)
        add("artistId", ids.albumArtist.map { .string(SubsonicID.artist($0).description) })
        add("type", .string("music"))
        add("mediaType", .string("song"))
        add("isVideo", .bool(false))
        add("playCount", .int(data?.playCount ?? 0))
        add("played", data?.lastPlayed.map { .string(iso($0)) })
        add("userRating", data?.rating.map { .int(stars($0)) })
        add("starred", data?.starred.map { .string(iso($0)) })
        add("sortName", .string(track.sortTitle ?? ""))
        add("samplingRate", track.sampleRate.map { .int($0) })
        add("channelCount", track.channels.map { .int($0) })
        return SubsonicElement(name, repeated: true, present: attributes)
    }

    /// An `album` (AlbumID3) element from its view row; `child` adds the folder-style fields
    /// (`title`, `isDir`, `parent`) that getAlbumList and search2 send.
    static func album(_ item: GroupItem, child: Bool = false, created: Date? = nil, sortName: String = "", starred: Date? = nil) -> SubsonicElement {
        var attributes: [(String, SubsonicValue?)] = [
            ("id", .string(SubsonicID.album(item.id).description)),
            ("name", .string(item.name)),
        ]
        if child {
            attributes += [("title", .string(item.name)), ("isDir", .bool(true)),
                           ("parent", item.artistID.map { .string(SubsonicID.artist($0).description) })]
        }
        attributes += [
            ("artist", item.artist.map { .string($0) }),
            ("artistId", item.artistID.map { .string(SubsonicID.artist($0).description) }),
            ("coverArt", hasPicture(item) ? .string(SubsonicID.album(item.id).description) : nil),
            ("songCount", .int(item.trackCount)),
            ("duration", .int(Int(item.duration.rounded()))),
            ("created", created.map { .string(iso($0)) }),
            ("year", item.year.map { .int($0) }),
            ("genre", item.genre.map { .string($0) }),
            ("starred", starred.map { .string(iso($0)) }),
            ("sortName", .string(sortName)),
        ]
        return SubsonicElement("album", repeated: true, attributes)
    }

    /// Whether a view row has a picture: a row read without its artwork lookup still names the
    /// track whose picture it shows, and the cover's own ID is the row's, so none is read here.
    static func hasPicture(_ item: GroupItem) -> Bool { item.artworkID != nil || item.artworkTrack != nil }

    /// An `artist` (ArtistID3) element from its album-artist view row.
    static func artist(_ item: GroupItem, children: [SubsonicElement] = [], starred: Date? = nil) -> SubsonicElement {
        SubsonicElement(
            "artist", repeated: true,
            [("id", .string(SubsonicID.artist(item.id).description)), ("name", .string(item.name)),
             ("coverArt", hasPicture(item) ? .string(SubsonicID.artist(item.id).description) : nil),
             ("albumCount", .int(item.albumCount)), ("starred", starred.map { .string(iso($0)) }), ("sortName", .string(""))],
            children: children)
    }

    /// One user's stars on albums and artists, read once per request (a user stars a few
    /// hundred at most; every album and artist element of the answer looks itself up here).
    struct GroupStars: Sendable {
        var albums: [GroupID: Date] = [:]
        var artists: [GroupID: Date] = [:]
    }

    /// `user`'s album and artist stars.
    func groupStars(of user: User) async throws -> GroupStars {
        func map(_ kind: GroupKind) async throws -> [GroupID: Date] {
            Dictionary(try await library.starredGroups(of: user.id, kind: kind).map { ($0.id, $0.starred) }, uniquingKeysWith: { first, _ in first })
        }
        return GroupStars(albums: try await map(.album), artists: try await map(.albumArtist))
    }

    /// Song elements for `ids` in that order, with `user`'s data (one lookup each).
    func songs(_ ids: [TrackID], for user: User, name: String = "song") async throws -> [SubsonicElement] {
        guard !ids.isEmpty else { return [] }
        // Songs carry no lyrics or comment: those long texts are left unread.
        let tracks = try await context.library.tracks(ids: ids, texts: false).tracks
        let byID = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let data = try await context.library.userTrackData(for: user.id, tracks: ids)
        // The tracks of a page mostly share albums: their keys are computed once per album.
        struct AlbumKey: Hashable {
            let album, albumArtist, artist: String?
            let compilation: Bool
        }
        var groups: [AlbumKey: TrackGroupIDs] = [:]
        return ids.compactMap { id in
            guard let track = byID[id] else { return nil }
            let key = AlbumKey(album: track.album, albumArtist: track.albumArtist, artist: track.artist, compilation: track.compilation)
            let known = groups[key] ?? Library.groupIDs(of: track)
            groups[key] = known
            return Self.song(track, data[id], name: name, ids: known)
        }
    }

    /// Album elements for view rows, each with `created` (the protocol requires it): the date its
    /// representative track was added, read in one lookup; an album without a picture has no
    /// representative, so its first track is read instead.
    func albumElements(_ items: [GroupItem], child: Bool = false, stars: GroupStars) async throws -> [SubsonicElement] {
        var representative: [GroupID: TrackID] = [:]
        for item in items {
            if let track = item.artworkTrack {
                representative[item.id] = track
            } else if let first = try await library.albumTracks(item.id).first {
                representative[item.id] = first.id
            }
        }
        let tracks = try await library.tracks(ids: Array(Set(representative.values))).tracks
        let added = Dictionary(tracks.map { ($0.id, $0.dateAdded) }, uniquingKeysWith: { first, _ in first })
        return items.map { item in
            Self.album(item, child: child, created: representative[item.id].flatMap { added[$0] } ?? Date(timeIntervalSince1970: 0), starred: stars.albums[item.id])
        }
    }

    /// The album view row of `id`, or error 70.
    func albumItem(_ id: GroupID) async throws -> GroupItem {
        guard let item = try await context.library.group(id, kind: .album) else { throw SubsonicError.notFound("album al-\(id)") }
        return item
    }

    /// The album-artist view row of `id`, or error 70.
    func artistItem(_ id: GroupID) async throws -> GroupItem {
        guard let item = try await context.library.group(id, kind: .albumArtist) else { throw SubsonicError.notFound("artist ar-\(id)") }
        return item
    }
}

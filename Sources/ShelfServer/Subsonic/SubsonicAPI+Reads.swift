import Foundation
import Shelf
import ShelfCore

/// The reads every section shares: songs with a user's data, albums with their dates, the rows
/// of one album or artist, and a user's stars on albums and artists.
extension SubsonicAPI {
    var library: Library { context.library }

    /// Whether a view row has a picture: a row read without its artwork lookup still names the
    /// track whose picture it shows, and the cover's own ID is the row's, so none is read here.
    static func hasPicture(_ item: GroupItem) -> Bool { item.artworkID != nil || item.artworkTrack != nil }

    /// One user's stars on albums and artists, read once per request (a user stars a few
    /// hundred at most; every album and artist of the answer looks itself up here).
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

    /// The songs of `ids` in that order, with `user`'s data (one lookup each); IDs of tracks
    /// gone since are left out.
    func songs(_ ids: [TrackID], for user: User) async throws -> [SubsonicSong] {
        guard !ids.isEmpty else { return [] }
        // Songs carry no lyrics: the longest text is left unread, with what songs do not show.
        let tracks = try await context.library.tracks(ids: ids, fields: .song).tracks
        let byID = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let data = try await context.library.userTrackData(for: user.id, tracks: ids)
        // The tracks of a page mostly share albums: their keys are computed once per album.
        struct AlbumKey: Hashable {
            let album, albumArtist, artist, release: String?
            let compilation: Bool
            let albumArtists: [String]
            let artistID, albumArtistID: String?
            let albumArtistIDs: [String]
        }
        var groups: [AlbumKey: TrackGroupIDs] = [:]
        return ids.compactMap { id in
            guard let track = byID[id] else { return nil }
            let key = AlbumKey(
                album: track.album, albumArtist: track.albumArtist, artist: track.artist, release: track.details.musicBrainz.releaseID,
                compilation: track.compilation, albumArtists: track.details.albumArtists, artistID: track.details.displayArtistID,
                albumArtistID: track.details.displayAlbumArtistID, albumArtistIDs: track.details.musicBrainz.albumArtistIDs)
            let known = groups[key] ?? Library.groupIDs(of: track)
            groups[key] = known
            return SubsonicSong(track, data[id], ids: known)
        }
    }

    /// Albums of view rows, each with `created` (the spec requires it) and the release fields of
    /// its first track's tags: the view row carries when that track was added and its ID, so a
    /// page of albums is one read of the rows and one probe of the mirror's songs.
    func albums(_ items: [GroupItem], child: Bool = false, stars: GroupStars) async throws -> [SubsonicAlbum] {
        let firsts = items.compactMap(\.firstTrack)
        let tracks = firsts.isEmpty ? [] : try await library.tracks(ids: firsts, fields: .song).tracks
        let byID = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return items.map {
            SubsonicAlbum(
                item: $0, child: child, created: $0.created ?? Date(timeIntervalSince1970: 0), starred: stars.albums[$0.id],
                release: $0.firstTrack.flatMap { byID[$0] })
        }
    }

    /// Each album artist's OpenSubsonic roles: `albumartist`, and `artist` when the artist view
    /// has the same ID (one name has one ID in both views), read in one lookup.
    func artistRoles(_ items: [GroupItem]) async throws -> [GroupID: [String]] {
        let credited = try await library.existingGroupIDs(items.map(\.id), kind: .artist)
        return Dictionary(items.map { ($0.id, credited.contains($0.id) ? ["albumartist", "artist"] : ["albumartist"]) }, uniquingKeysWith: { a, _ in a })
    }

    /// The MusicBrainz ID of an artist, from its first track: the ID its key there carries, the
    /// one that tells it apart ("A feat. B" carries none, and is not A).
    func artistMusicBrainzID(_ item: GroupItem) async throws -> String? {
        guard let first = item.firstTrack, let track = try await library.tracks(ids: [first], fields: .song).tracks.first else { return nil }
        return Library.artistMusicBrainzID(item.id, on: track)
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

    /// The album rows of `ids`, in order (an album gone since is left out).
    func albumItems(_ ids: [GroupID]) async throws -> [GroupItem] {
        try await library.groups(ids: ids, kind: .album)
    }
}

import CCrypto
import Foundation
import ShelfCore

/// The groups one track files under, by ID: what a protocol that names a song's album and
/// artist (Subsonic) needs without paging through the views.
public struct TrackGroupIDs: Sendable, Hashable {
    /// The album view's row (the owner's unknown album when the track has no album name).
    public var album: GroupID?
    /// The album-artist view's row the album files under ("Various Artists" for compilations,
    /// else the album artist, else the artist; the unknown artist when it has none of them).
    public var albumArtist: GroupID?

    /// Builds a value (the engine computes them with `Library.groupIDs(of:)`).
    public init(album: GroupID? = nil, albumArtist: GroupID? = nil) {
        self.album = album
        self.albumArtist = albumArtist
    }
}

extension Library {
    /// One row of an aggregation view by its ID, with its picture; nil when the view has none.
    /// Within `scope`, a group with no track there is none, and its counts are the scope's.
    public func group(_ id: GroupID, kind: GroupKind, scope: LibraryScope = .current) async throws -> GroupItem? {
        guard var item = try await withGroups(scope, { try $0.group(id, kind: kind) }, { table, _ in table.group(id, kind: kind) }) else { return nil }
        if let picture = try await artistPictures([id], kind: kind)[id] {
            item.artworkID = picture
        } else if let track = item.artworkTrack {
            item.artworkID = try await self.track(track)?.artworkID
        }
        return item
    }

    /// The `artist.*` pictures of these album artists or artists (other kinds have none), by ID.
    public func artistPictures(_ ids: [GroupID], kind: GroupKind) async throws -> [GroupID: ArtworkID] {
        let column: String
        switch kind {
        case .albumArtist: column = "album_artist_id"
        case .artist: column = "artist_id"
        default: return [:]
        }
        guard !ids.isEmpty else { return [:] }
        let list = "[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]"
        return try await read { db in
            var pictures: [GroupID: ArtworkID] = [:]
            try db.forEachRow("SELECT \(column), artwork_id FROM artist_picture WHERE \(column) IN (SELECT value FROM json_each(?))", [list]) {
                pictures[GroupID(rawValue: try $0.int64(0))] = ArtworkID(try $0.get(1, as: UUID.self))
            }
            return pictures
        }
    }

    /// The rows of a view with these IDs, in the order asked (gone ones left out), in one read and
    /// without their artwork lookups (a row still names the track whose picture it shows).
    public func groups(ids: [GroupID], kind: GroupKind, scope: LibraryScope = .current) async throws -> [GroupItem] {
        try await withGroups(scope, { try $0.groups(ids, kind: kind) }, { table, _ in table.groups(ids, kind: kind) })
    }

    /// Which of these IDs are rows of a view (within `scope`), without reading the rows: what a
    /// list of thousands asks when it only needs to know whether a name is also in another view.
    public func existingGroupIDs(_ ids: [GroupID], kind: GroupKind, scope: LibraryScope = .current) async throws -> Set<GroupID> {
        try await withGroups(scope, { try $0.existingGroupIDs(ids, kind: kind) }, { table, _ in table.existing(ids, kind: kind) })
    }

    /// Up to `count` distinct rows of a view drawn uniformly at random (each as likely as any
    /// other), without their artwork lookups.
    public func randomGroups(kind: GroupKind, count: Int, scope: LibraryScope = .current) async throws -> [GroupItem] {
        guard count > 0 else { return [] }
        let all = try await withGroups(scope, { try $0.groupIDs(kind: kind) }, { table, _ in table.ids(kind: kind) })
        return try await groups(ids: all.randomSample(count), kind: kind, scope: scope)
    }

    /// The group IDs of `track`, computed with the same keys and hash as the views (default
    /// collation options, as the mirror uses), so they match `groups(_:)` rows exactly.
    public static func groupIDs(of track: Track) -> TrackGroupIDs {
        // Only the keys these IDs need, by the rules of `GroupMember.albumOwner` and `groups`
        // (GroupTests checks they agree with the views).
        let options = SortKeyOptions()
        let album = SortKey.albumKey(of: track, options: options)
        var owner = GroupMember.variousArtistsKey
        if !track.compilation {
            owner = SortKey.albumArtistKey(of: track, options: options)
            if owner == SortKey.missingKey { owner = SortKey.artistKey(of: track, options: options) }
        }
        // Every track has both: a blank album is its owner's unknown album, a blank owner the
        // unknown artist (see `GroupMember.groups`). The album artist is the one the album's row
        // names: the owner, unless the track's list names several others (GroupAccumulator).
        var named = owner
        if !track.compilation, track.details.albumArtists.count > 1 {
            let owners = GroupMember.credits(track.details.albumArtists, ids: track.details.musicBrainz.albumArtistIDs, options: options).map(\.key)
            if !owners.contains(owner), let first = owners.first { named = first }
        }
        return TrackGroupIDs(album: GroupKey(kind: .album, key: owner, album: album).id, albumArtist: GroupKey(kind: .albumArtist, key: named).id)
    }

    /// The album-artist view's ID for an artist's name: the one ID every track and album that
    /// credits the name without a MusicBrainz ID shares (names are told apart by their sort key,
    /// as the views group them). `artistID(named:musicBrainzID:)` adds the ID.
    public static func artistID(named name: String) -> GroupID {
        GroupKey(kind: .albumArtist, key: SortKey.textKey(name, options: SortKeyOptions())).id
    }

    /// The artist views' ID for a name and its MusicBrainz artist ID (nil or not a UUID: the
    /// name alone): two artists of one name with different IDs are two artists.
    public static func artistID(named name: String, musicBrainzID: String?) -> GroupID {
        GroupKey(kind: .albumArtist, key: SortKey.withArtistID(SortKey.textKey(name, options: SortKeyOptions()), musicBrainzID)).id
    }

    /// Lower-case hex MD5 of `password + salt`: Subsonic's token. MD5 only because the protocol
    /// fixes it; nothing of Shelf's own uses it.
    public static func subsonicToken(password: String, salt: String) -> String {
        let input = Array((password + salt).utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(input, input.count, &digest, &length, EVP_md5(), nil) == 1 else { return "" }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `token` is the Subsonic token of `user`'s password with `salt`, compared in
    /// constant time.
    public func subsonicTokenMatches(user: UserID, token: String, salt: String) async throws -> Bool {
        let expected = Self.subsonicToken(password: try await password(of: user), salt: salt)
        return Secrets.constantTimeEqual(Data(expected.utf8), Data(token.lowercased().utf8))
    }
}

extension Library {
    /// The keys `track` credits artists by, as the artist views group them: its artists (the
    /// list's names, else its display credit) and every album artist its album files under.
    static func creditedArtistKeys(_ track: Track) -> [[UInt8]] {
        let member = GroupMember(track, options: SortKeyOptions())
        let credited = member.artists.isEmpty ? [member.kArtist] : member.artists.map(\.key)
        return credited + member.albumOwners.map(\.key)
    }

    /// The MusicBrainz ID by which `track` credits artist `id` (its key's tail), or nil when it
    /// credits the name without one, or not at all.
    public static func artistMusicBrainzID(_ id: GroupID, on track: Track) -> String? {
        creditedArtistKeys(track).first { GroupKey(kind: .artist, key: $0).id == id }.flatMap(SortKey.musicBrainzID(ofKey:))
    }

    /// Of `candidates` (tracks found by an artist's name, in their order), the first `limit`
    /// that credit artist `id` as a track artist or an album artist: a name's tracks less those
    /// of the other artists of that name, told apart by MusicBrainz ID.
    public func tracks(_ candidates: [TrackID], creditedTo id: GroupID, limit: Int = .max) async throws -> [TrackID] {
        var kept: [TrackID] = []
        for start in stride(from: 0, to: candidates.count, by: 500) where kept.count < limit {
            let page = Array(candidates[start..<min(candidates.count, start + 500)])
            for track in try await tracks(ids: page, fields: .withoutTexts).tracks where kept.count < limit {
                if Self.creditedArtistKeys(track).contains(where: { GroupKey(kind: .artist, key: $0).id == id }) { kept.append(track.id) }
            }
        }
        return kept
    }

    /// The albums artist `id` is credited on (as a track's artist, or in its `artists` list)
    /// whose album artist is someone else: an artist page's "Appears on". Within the current
    /// scope; oldest first, undated last, then by name.
    public func appearances(of id: GroupID) async throws -> [GroupItem] {
        let found = try await group(id, kind: .artist)
        guard let name = found?.name, !SortKey.isBlank(name) else { return [] }
        // The filter finds every track naming the artist (display credit or list); the IDs keep
        // exactly those whose credit is this artist under the views' key.
        let candidates = try await snapshot(LibraryQuery(sort: .album, filter: .text(.artist, .equals(name))))
        var albums: [GroupID] = []
        var seen = Set<GroupID>()
        for start in stride(from: 0, to: candidates.count, by: 500) {
            let page = Array(candidates[start..<min(candidates.count, start + 500)])
            for track in try await tracks(ids: page, fields: .withoutTexts).tracks {
                // The credits' keys, MusicBrainz IDs included, as the views group them.
                let member = GroupMember(track, options: SortKeyOptions())
                let credited = member.artists.isEmpty ? [member.kArtist] : member.artists.map(\.key)
                guard credited.contains(where: { GroupKey(kind: .artist, key: $0).id == id }) else { continue }
                let ids = Self.groupIDs(of: track)
                // An album of several album artists is its own for each of them (GroupMember.albumOwners).
                let owners = member.albumOwners.map { GroupKey(kind: .albumArtist, key: $0.key).id }
                guard let album = ids.album, !owners.contains(id), seen.insert(album).inserted else { continue }
                albums.append(album)
            }
        }
        let items = try await groups(ids: albums, kind: .album)
        return items.sorted { ($0.year ?? Int.max, $0.name) < ($1.year ?? Int.max, $1.name) }
    }
}

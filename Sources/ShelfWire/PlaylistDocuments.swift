import ShelfCore

/// A playlist as lists print it: `{"id":…,"name":…,"kind":"regular"|"folder"|"smart","parentID":…,"itemCount":N}`.
public struct PlaylistSummary: Encodable, Sendable {
    /// The playlist's ID.
    public let id: PlaylistID
    /// Its name.
    public let name: String
    /// `regular`, `folder` or `smart`.
    public let kind: String
    /// The folder holding it.
    public let parentID: PlaylistID?
    /// Its items (0 for folders and smart playlists in lists).
    public let itemCount: Int
    /// The owner's note about it (absent when it has none).
    public let comment: String?

    /// The summary of `playlist` with `itemCount` items.
    public init(_ playlist: Playlist, itemCount: Int) {
        id = playlist.id
        name = playlist.name
        kind = Self.kindName(playlist.kind)
        parentID = playlist.parentID
        self.itemCount = itemCount
        comment = playlist.comment
    }

    /// The JSON name of a playlist kind.
    public static func kindName(_ kind: Playlist.Kind) -> String {
        switch kind {
        case .regular: "regular"
        case .folder: "folder"
        case .smart: "smart"
        }
    }
}

/// `{"playlists":[…]}`.
public struct PlaylistsDocument: Encodable, Sendable {
    /// Every playlist and folder.
    public let playlists: [PlaylistSummary]
    /// A document of `playlists`.
    public init(playlists: [PlaylistSummary]) { self.playlists = playlists }
}

/// One playlist item: its position (from 1) and the whole track.
public struct PlaylistItem: Encodable, Sendable {
    /// Position in the playlist, counting from 1.
    public let position: Int
    /// The track there.
    public let track: Track
}

/// `{"playlist":{…},"items":[{"position":1,"track":{…}},…]}`.
public struct PlaylistDocument: Encodable, Sendable {
    /// The playlist.
    public let playlist: PlaylistSummary
    /// Its items in order.
    public let items: [PlaylistItem]
}

/// `{"id":…,"itemCount":N}`: a playlist after an edit.
public struct PlaylistCountDocument: Encodable, Sendable {
    /// The playlist's ID.
    public let id: Int64
    /// Its item count now.
    public let itemCount: Int64
}

/// `{"id":…,"name":…,"rules":{…}}`: a smart playlist just created.
public struct SmartCreatedDocument: Encodable, Sendable {
    /// The new playlist's ID.
    public let id: PlaylistID
    /// Its name.
    public let name: String
    /// Its rules.
    public let rules: SmartRules
    /// A document from its parts.
    public init(id: PlaylistID, name: String, rules: SmartRules) {
        self.id = id
        self.name = name
        self.rules = rules
    }
}

/// `{"id":…,"trackCount":N,"trackIDs":[…],"items":[…]}`: a smart playlist evaluated now.
public struct SmartPlaylistDocument: Encodable, Sendable {
    /// The playlist's ID.
    public let id: PlaylistID
    /// How many tracks it holds now.
    public let trackCount: Int
    /// Every track ID in order.
    public let trackIDs: [TrackID]
    /// The first tracks, whole.
    public let items: [ListedTrack]
}

import Foundation
import ShelfCore
import ShelfDatabase

/// Answers every browsing question about a list. Two implementations: `DirectQueryEngine` (the
/// oracle, canonical rows sorted in Swift) and `MirrorQueryEngine` (everything pushed into SQL on
/// the mirror); parity tests demand identical answers.
package protocol QueryEngine: GroupEngine {
    /// Up to `limit` rows after `cursor` (from the start when nil).
    func page(_ query: LibraryQuery, after cursor: PageCursor?, limit: Int) throws -> ListPage
    /// Up to `limit` rows from row `offset`.
    func page(_ query: LibraryQuery, offset: Int, limit: Int) throws -> ListPage
    /// Every matching track ID, in order: what a list view holds to scroll anywhere.
    func snapshot(_ query: LibraryQuery) throws -> [TrackID]
    /// Each section's name, first index and count, in list order.
    func sections(_ query: LibraryQuery) throws -> [SectionInfo]
    /// The index and a cursor of a section's first row; nil when the list has no such section.
    func anchor(_ section: String, _ query: LibraryQuery) throws -> SectionAnchor?
    /// Whether the list has any row.
    func hasRows(_ query: LibraryQuery) throws -> Bool
    /// Up to `limit` of a playlist's items (a track may appear more than once), in the playlist's
    /// own order (`sorted` false) or in `query`'s sort order, filtered by `query.filter`; the
    /// cursor's key ends with the item's position.
    func playlistPage(_ playlist: PlaylistID, _ query: LibraryQuery, sorted: Bool, after cursor: PageCursor?, limit: Int) throws -> ListPage
    /// The sections of a playlist sorted like `query`: name, first index, count.
    func playlistSections(_ playlist: PlaylistID, _ query: LibraryQuery) throws -> [SectionInfo]
    /// Up to `limit` tracks matching a search within `scope`, best first, after `cursor`.
    func search(_ search: SearchQuery, scope: SearchScope, after cursor: PageCursor?, limit: Int) throws -> ListPage
    /// A smart playlist's track IDs in selection order, evaluated now.
    func smartTracks(_ id: PlaylistID, _ context: SmartContext) throws -> [TrackID]
    /// A page of a smart playlist in its own order (`sorted` false) or sorted like `query`,
    /// narrowed by `query.filter`.
    func smartPage(_ id: PlaylistID, _ context: SmartContext, _ query: LibraryQuery, sorted: Bool, after cursor: PageCursor?, limit: Int) throws -> ListPage
    /// The sections of a smart playlist sorted like `query` and narrowed by its filter.
    func smartSections(_ id: PlaylistID, _ context: SmartContext, _ query: LibraryQuery) throws -> [SectionInfo]
}

/// The aggregation views, answered by both engines alike.
package protocol GroupEngine {
    /// Up to `limit` rows of a view after `cursor`, in name order (sort names with sort tags on).
    func groups(_ query: GroupQuery, after cursor: PageCursor?, limit: Int) throws -> GroupPage
    /// Up to `limit` rows of a view from row `offset`, at the cost of a first page at any depth.
    func groups(_ query: GroupQuery, offset: Int, limit: Int) throws -> GroupPage
    /// Each section of a view: name, first index, count.
    func groupSections(_ query: GroupQuery) throws -> [SectionInfo]
    /// An album's tracks in disc, track, title, ID order; nil when there is no such album.
    func albumTracks(_ album: GroupID) throws -> [TrackListItem]?
    /// One row of a view by its ID (sections as with sort tags on); nil when there is none.
    func group(_ id: GroupID, kind: GroupKind) throws -> GroupItem?
    /// The rows of a view with these IDs, in the order asked (IDs with no row left out).
    func groups(_ ids: [GroupID], kind: GroupKind) throws -> [GroupItem]
    /// Every row ID of a view, in no particular order.
    func groupIDs(kind: GroupKind) throws -> [GroupID]
    /// Which of these IDs have a row in a view (none of the rows read).
    func existingGroupIDs(_ ids: [GroupID], kind: GroupKind) throws -> Set<GroupID>
    /// The people credited in `role` (a `MirrorLists.roles` name), by name key (`RoleCredits`).
    func roleCredits(_ role: String) throws -> [GroupItem]
}

extension GroupEngine {
    /// The rows read and their IDs kept: the direct path, where every read recomputes the views anyway.
    package func existingGroupIDs(_ ids: [GroupID], kind: GroupKind) throws -> Set<GroupID> { Set(try groups(ids, kind: kind).map(\.id)) }
}

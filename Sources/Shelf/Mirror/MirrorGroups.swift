import Foundation
import ShelfCore
import ShelfDatabase

/// What the aggregation views need of one track: display values, keys and the tallied numbers.
/// Built from a `Track` (direct path, write batches) or from a `mirror_track` row (catch-up,
/// recomputing a group), so both paths aggregate the same values with the same code.
struct GroupMember: Equatable {
    var id: Int64
    var album, albumArtist, artist, composer, genre: String?
    /// Sort tags present (non-blank): their keys; nil when the track carries none.
    var albumTag, albumArtistTag, artistTag, composerTag: [UInt8]?
    /// The sort tags as written (what Subsonic's `sortName` sends), nil when blank.
    var albumSort, albumArtistSort, artistSort, composerSort: String?
    var kAlbum, kAlbumArtist, kArtist, kComposer, kGenre: [UInt8]
    var year: Int?
    var duration: Double?
    var disc: Int?
    var track: Int?
    var hasArtwork: Bool
    var compilation: Bool
    /// When the track was added, in whole seconds (the mirror's `n_date_added`).
    var added: Double
    /// The artists, composers and genres the track's lists credit (each key once, named as first
    /// listed): a track with a list counts under each of its values instead of its display value
    /// ("A feat. B" is a credit, not an artist).
    var artists: [Credit] = []
    var composers: [Credit] = []
    var genres: [Credit] = []
    /// The album artists the track's list names (its `albumArtists`): an album whose tracks
    /// name several files under each of them (`albumOwners`).
    var albumArtists: [Credit] = []

    /// A credited value's group key and name.
    struct Credit: Equatable {
        let key: [UInt8]
        let name: String
    }

    /// The values of `list`, once per key, in list order; artists' names keyed with their
    /// MusicBrainz IDs when `ids` line up with them (`SortKey.creditKeys`).
    static func credits(_ list: [String], ids: [String] = [], options: SortKeyOptions) -> [Credit] {
        var seen: Set<[UInt8]> = []
        var credits: [Credit] = []
        for (name, key) in zip(list, SortKey.creditKeys(list, ids: ids, options: options)) where !SortKey.isBlank(name) {
            if seen.insert(key).inserted { credits.append(Credit(key: key, name: name)) }
        }
        return credits
    }

    mutating func addCredits(_ details: TrackDetails, options: SortKeyOptions) {
        addCredits(details.creditLists, options: options)
    }

    mutating func addCredits(_ lists: TrackDetails.CreditLists, options: SortKeyOptions) {
        self.artists = Self.credits(lists.artists, ids: lists.artistIDs, options: options)
        self.composers = Self.credits(lists.composers, options: options)
        self.genres = Self.credits(lists.genres, options: options)
        self.albumArtists = Self.credits(lists.albumArtists, ids: lists.albumArtistIDs, options: options)
    }

    static let variousArtists = "Various Artists"
    static let variousArtistsKey = SortKey.textKey(variousArtists)

    init(_ t: Track, options: SortKeyOptions) {
        func key(_ value: String?) -> [UInt8] { SortKey.textKey(value, options: options) }
        func tag(_ value: String?) -> [UInt8]? { SortKey.isBlank(value) ? nil : key(value) }
        func text(_ value: String?) -> String? { SortKey.isBlank(value) ? nil : value }
        id = t.id.rawValue
        album = t.album
        albumArtist = t.albumArtist
        artist = t.artist
        composer = t.composer
        genre = t.genre
        let release = t.details.musicBrainz.releaseID
        albumTag = tag(t.sortAlbum).map { SortKey.withRelease($0, release) }
        albumArtistTag = tag(t.sortAlbumArtist).map { SortKey.withArtistID($0, t.details.displayAlbumArtistID) }
        artistTag = tag(t.sortArtist).map { SortKey.withArtistID($0, t.details.displayArtistID) }
        composerTag = tag(t.sortComposer)
        albumSort = text(t.sortAlbum)
        albumArtistSort = text(t.sortAlbumArtist)
        artistSort = text(t.sortArtist)
        composerSort = text(t.sortComposer)
        kAlbum = SortKey.albumKey(of: t, options: options)
        kAlbumArtist = SortKey.albumArtistKey(of: t, options: options)
        kArtist = SortKey.artistKey(of: t, options: options)
        kComposer = key(t.composer)
        kGenre = key(t.genre)
        year = t.year
        duration = t.duration
        disc = t.discNumber
        track = t.trackNumber
        hasArtwork = t.hasArtwork
        compilation = t.compilation
        added = NumberField.seconds(t.dateAdded)
        addCredits(t.details, options: options)
    }

    /// The columns `init(row:)` reads, in order.
    static let columns = """
        id, album, album_artist, artist, composer, genre, sort_album, coalesce(t_album, k_album), sort_album_artist,
        coalesce(t_album_artist, k_album_artist), sort_artist, coalesce(t_artist, k_artist), sort_composer,
        coalesce(t_composer, k_composer), k_album, k_album_artist, k_artist, k_composer, k_genre, n_year, n_duration,
        n_disc_number, n_track_number, has_artwork, compilation, n_date_added, details
        """

    /// A member from its mirror row; its credits keyed with `options`, the mirror's.
    init(row: Row, options: SortKeyOptions = SortKeyOptions()) throws {
        func tag(_ textColumn: Int32, _ keyColumn: Int32) throws -> [UInt8]? {
            row.optionalString(textColumn) == nil ? nil : [UInt8](try row.data(keyColumn))
        }
        func number(_ index: Int32) -> Double? {
            guard let value = row.optionalDouble(index), value < SortKey.missingNumber else { return nil }
            return value
        }
        id = try row.int64(0)
        album = row.optionalString(1)
        albumArtist = row.optionalString(2)
        artist = row.optionalString(3)
        composer = row.optionalString(4)
        genre = row.optionalString(5)
        albumTag = try tag(6, 7)
        albumArtistTag = try tag(8, 9)
        artistTag = try tag(10, 11)
        composerTag = try tag(12, 13)
        albumSort = row.optionalString(6)
        albumArtistSort = row.optionalString(8)
        artistSort = row.optionalString(10)
        composerSort = row.optionalString(12)
        kAlbum = [UInt8](try row.data(14))
        kAlbumArtist = [UInt8](try row.data(15))
        kArtist = [UInt8](try row.data(16))
        kComposer = [UInt8](try row.data(17))
        kGenre = [UInt8](try row.data(18))
        year = number(19).map { Int($0) }
        duration = number(20)
        disc = number(21).map { Int($0) }
        track = number(22).map { Int($0) }
        hasArtwork = try row.int64(23) != 0
        compilation = try row.int64(24) != 0
        added = try row.double(25)
        if let encoded = row.optionalString(26) {
            addCredits(TrackDetails.creditLists(encoded: encoded), options: options)
        }
    }

    /// The album artist an album files under: "Various Artists" for a compilation, else the album
    /// artist, else the artist (key, display, sort-tag key, sort tag as written). With neither,
    /// the missing key: the unknown artist, which is a group too.
    var albumOwner: (key: [UInt8], name: String?, tag: [UInt8]?, sort: String?) {
        if compilation { return (Self.variousArtistsKey, Self.variousArtists, Self.variousArtistsKey, Self.variousArtists) }
        if kAlbumArtist != SortKey.missingKey { return (kAlbumArtist, albumArtist, albumArtistTag, albumArtistSort) }
        return (kArtist, artist, artistTag, artistSort)
    }

    /// Every album artist the track's album files under: each name of its album-artist list when
    /// the list names several (an album of two artists is listed, and counted, under both), else
    /// `albumOwner` alone. Compilations file under "Various Artists" only.
    var albumOwners: [Credit] {
        guard !compilation, albumArtists.count > 1 else { return [Credit(key: albumOwner.key, name: albumOwner.name ?? "")] }
        return albumArtists
    }

    /// The groups of the track-level kinds it belongs to. Every track has an album: a blank album
    /// name is its owner's unknown album (apps that browse by album would never see those tracks
    /// otherwise); other blank names belong to no group of their kind.
    var groups: [GroupKey] {
        var keys: [GroupKey] = [GroupKey(kind: .album, key: albumOwner.key, album: kAlbum)]
        func add(_ kind: GroupKind, _ display: [UInt8], _ credits: [Credit]) {
            if credits.isEmpty {
                if display != SortKey.missingKey { keys.append(GroupKey(kind: kind, key: display)) }
            } else {
                keys += credits.map { GroupKey(kind: kind, key: $0.key) }
            }
        }
        add(.artist, kArtist, artists)
        add(.composer, kComposer, composers)
        add(.genre, kGenre, genres)
        return keys
    }
}

/// A group's identity: its kind and folded key (an album's is its album artist's key and its own).
struct GroupKey: Hashable {
    let kind: GroupKind
    let key: [UInt8]
    var album: [UInt8]? = nil

    /// The key this group had before keys carried names' identity (schema 15): its keys' bodies.
    /// Names that differ only in what sorting folds (ひかる, ヒカル) were one group then.
    var beforeIdentity: GroupKey {
        GroupKey(kind: kind, key: SortKey.body(ofKey: key), album: album.map(SortKey.body(ofKey:)))
    }

    /// The key this group had before albums were told apart by MusicBrainz release (schema 17).
    var withoutRelease: GroupKey { GroupKey(kind: kind, key: key, album: album.map(SortKey.withoutRelease)) }

    /// The key this group had before artists were told apart by MusicBrainz artist ID (schema
    /// 18): an artist's, or an album's owner's, key without its ID; an album's own key as it was.
    var withoutArtistID: GroupKey { GroupKey(kind: kind, key: SortKey.withoutRelease(key), album: album) }

    /// FNV-1a (64-bit) of a family byte and the key bytes, as a positive 62-bit number: stable,
    /// cheap, and with about a million groups a collision is a one-in-ten-million event. Artist
    /// and album artist share a family, so a name has one ID in both views.
    var id: GroupID {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let family: UInt8 =
            switch kind {
            case .album: 0x41
            case .artist, .albumArtist: 0x52
            case .composer: 0x43
            case .genre: 0x47
            }
        mix(family)
        for byte in key { mix(byte) }
        if let album {
            mix(0)
            for byte in album { mix(byte) }
        }
        let value = Int64(bitPattern: hash & 0x3FFF_FFFF_FFFF_FFFF)
        return GroupID(value == 0 ? 1 : value)
    }
}

/// One row of `mirror_group`, and the aggregation rules that make it.
struct GroupRow: Equatable {
    var id: GroupID
    var kind: GroupKind
    var name: String
    var artist: String?
    var artistID: GroupID?
    var kName: [UInt8]
    var sName: [UInt8]
    /// The sort tag `sName` was made from as written; nil when the name's own key sorts it.
    var sortName: String?
    var artistKey: [UInt8]?
    var sArtist: [UInt8]?
    /// Albums: the owner's sort tag as written (for the album artist's `sortName`).
    var artistSort: String?
    var trackCount: Int
    var albumCount: Int
    var duration: Double
    var year: Int?
    var genre: String?
    /// The track whose picture represents the group (its `ArtworkID` is read from the store).
    var artworkTrack: Int64?
    var firstTrack: Int64
    /// Albums: when its first track was added (seconds; what Subsonic's `created` sends).
    var created: Double?
    /// Albums: every album artist it files under (`GroupMember.albumOwners` over its tracks, the
    /// owner first when it is one); kept in `mirror_album_owner`, empty on a row read back from
    /// `mirror_group`.
    var owners: [GroupMember.Credit] = []

    /// The album artists of an album row: its owners, or the owner its columns name.
    var ownerList: [GroupMember.Credit] {
        if !owners.isEmpty { return owners }
        return artistKey.map { [GroupMember.Credit(key: $0, name: artist ?? "")] } ?? []
    }

    /// Whether an album row files under album artist `id`.
    func isOwned(by id: GroupID) -> Bool {
        owners.isEmpty ? artistID == id : owners.contains { GroupKey(kind: .albumArtist, key: $0.key).id == id }
    }

    /// An album row as one of its album artists sees it: named with that artist, sorted by that
    /// artist's key (an artist's own sort tag only when it is the album's owner).
    func owned(by owner: GroupMember.Credit) -> GroupRow {
        guard owner.key != artistKey else { return self }
        var row = self
        row.artist = owner.name
        row.artistKey = owner.key
        row.sArtist = owner.key
        row.artistSort = nil
        return row
    }

    /// The key that most of `tags` hold; ties go to the key that sorts first; nil when empty.
    static func majority(_ tags: [([UInt8], Int)]) -> [UInt8]? {
        var counts: [[UInt8]: Int] = [:]
        for (tag, weight) in tags { counts[tag, default: 0] += weight }
        return majority(counts)
    }

    static func majority(_ counts: [[UInt8]: Int]) -> [UInt8]? {
        counts.min { a, b in a.value != b.value ? a.value > b.value : a.key.lexicographicallyPrecedes(b.key) }?.key
    }

    /// The majority key of `counts` and the text first written for it (by the lowest ID).
    static func majority(_ counts: [[UInt8]: (count: Int, text: String?)]) -> (key: [UInt8], text: String?)? {
        guard let key = majority(counts.mapValues(\.count)) else { return nil }
        return (key, counts[key]?.text)
    }

    /// A track-level group from its members (any order; at least one).
    static func aggregate(_ key: GroupKey, _ members: [GroupMember]) -> GroupRow {
        var accumulator = GroupAccumulator(key)
        for member in members.sorted(by: { $0.id < $1.id }) { accumulator.add(member) }
        return accumulator.row()
    }

    /// An album artist from its albums (at least one): the name of its first album's owner,
    /// the sort name most of its albums' tracks carry, the totals, the first album's picture.
    static func aggregate(albumArtist key: [UInt8], albums unsorted: [GroupRow]) -> GroupRow {
        let albums = unsorted.sorted { $0.firstTrack < $1.firstTrack }
        let sName = majority(albums.map { ($0.sArtist ?? key, $0.trackCount) }) ?? key
        return GroupRow(
            id: GroupKey(kind: .albumArtist, key: key).id, kind: .albumArtist, name: albums[0].artist ?? "", kName: key,
            sName: sName, sortName: albums.first { ($0.sArtist ?? key) == sName && $0.artistSort != nil }?.artistSort,
            trackCount: albums.reduce(0) { $0 + $1.trackCount }, albumCount: albums.count,
            duration: albums.reduce(0) { $0 + $1.duration }, artworkTrack: albums.first { $0.artworkTrack != nil }?.artworkTrack,
            firstTrack: albums[0].firstTrack)
    }

    /// Every group of every kind from all tracks: the direct path's views.
    static func all(_ tracks: [Track], options: SortKeyOptions) -> [GroupRow] {
        var accumulators = GroupAccumulators()
        for track in tracks.sorted(by: { $0.id < $1.id }) { accumulators.add(GroupMember(track, options: options)) }
        return accumulators.rows()
    }

    // MARK: Mirror storage

    static let columns = """
        kind, id, name, artist, artist_id, k_name, s_name, k_artist, s_artist, track_count, album_count, duration, year, genre,
        artwork_track, first_track, sort_name, artist_sort, created
        """
    /// How many columns `columns` lists (a page's total follows them).
    static let columnCount: Int32 = 19

    var values: [(any SQLiteBindable)?] {
        [
            kind.code, id.rawValue, name, artist, artistID?.rawValue, Data(kName), Data(sName), artistKey.map { Data($0) },
            sArtist.map { Data($0) }, Int64(trackCount), Int64(albumCount), duration, year.map { Int64($0) }, genre, artworkTrack, firstTrack,
            sortName, artistSort, created,
        ]
    }

    init(
        id: GroupID, kind: GroupKind, name: String, artist: String? = nil, artistID: GroupID? = nil, kName: [UInt8], sName: [UInt8],
        sortName: String? = nil, artistKey: [UInt8]? = nil, sArtist: [UInt8]? = nil, artistSort: String? = nil, trackCount: Int,
        albumCount: Int, duration: Double, year: Int? = nil, genre: String? = nil, artworkTrack: Int64? = nil, firstTrack: Int64
    ) {
        self.id = id
        self.kind = kind
        self.name = name
        self.artist = artist
        self.artistID = artistID
        self.kName = kName
        self.sName = sName
        self.sortName = sortName
        self.artistKey = artistKey
        self.sArtist = sArtist
        self.artistSort = artistSort
        self.trackCount = trackCount
        self.albumCount = albumCount
        self.duration = duration
        self.year = year
        self.genre = genre
        self.artworkTrack = artworkTrack
        self.firstTrack = firstTrack
    }

    init(row: Row) throws {
        let code = try row.int64(0)
        kind = GroupKind.allCases.first { $0.code == code } ?? .album
        id = GroupID(try row.int64(1))
        name = try row.string(2)
        artist = row.optionalString(3)
        artistID = row.optionalInt64(4).map { GroupID($0) }
        kName = try row.bytes(5)
        sName = try row.bytes(6)
        artistKey = row.isNull(7) ? nil : try row.bytes(7)
        sArtist = row.isNull(8) ? nil : try row.bytes(8)
        trackCount = Int(try row.int64(9))
        albumCount = Int(try row.int64(10))
        duration = try row.double(11)
        year = row.optionalInt64(12).map { Int($0) }
        genre = row.optionalString(13)
        artworkTrack = row.optionalInt64(14)
        firstTrack = try row.int64(15)
        sortName = row.optionalString(16)
        artistSort = row.optionalString(17)
        created = row.optionalDouble(18)
    }

    /// The view row with its section under `query`'s order (its `artworkID` is filled in later).
    func item(useSortTags: Bool) -> GroupItem { item(GroupQuery(kind: kind, useSortTags: useSortTags)) }

    /// The row as a view's item; its section is that of the first key `query` orders by.
    func item(_ query: GroupQuery) -> GroupItem {
        GroupItem(
            id: id, kind: kind, name: name, sortName: sortName, artist: artist, artistID: artistID, trackCount: trackCount,
            albumCount: albumCount, duration: duration, year: year, genre: genre, artworkTrack: artworkTrack.map { TrackID($0) },
            created: created.map { Date(timeIntervalSince1970: $0) }, section: SortKey.section(ofKey: orderKeys(query)[0]),
            firstTrack: TrackID(firstTrack))
    }
}

/// One group's running totals, fed its members in increasing ID order: the one definition of a
/// group row, used by the direct path, by sync (one group's members) and by a build (one pass
/// over every track).
/// - name: the display value of the lowest-ID member;
/// - sort name: the sort tag most members carry, else the name's key (`GroupRow.majority`);
/// - albums also get the owner (album artist), the latest year, the commonest genre (named as
///   on its lowest-ID track), and the picture of the first member with one in disc, track, ID order.
struct GroupAccumulator {
    let key: GroupKey
    private var count = 0
    private var duration = 0.0
    private var firstID: Int64 = .max
    private var name: String?
    private var ownerName: String?
    private var tags: [[UInt8]: (count: Int, text: String?)] = [:]
    private var ownerTags: [[UInt8]: (count: Int, text: String?)] = [:]
    private var albums = Set<[UInt8]>()
    private var year: Int?
    private var genres: [[UInt8]: (count: Int, name: String?)] = [:]
    private var artwork: (disc: Int, track: Int, id: Int64)?
    private var created = Double.infinity
    private var owners: [GroupMember.Credit] = []
    private var ownerKeys = Set<[UInt8]>()

    init(_ key: GroupKey) { self.key = key }

    mutating func add(_ m: GroupMember) {
        // A member credited through its list rather than its display value: named as listed,
        // and without a sort tag (the track's tag sorts its display value).
        let display: Bool =
            switch key.kind {
            case .album, .albumArtist: true
            case .artist: key.key == m.kArtist
            case .composer: key.key == m.kComposer
            case .genre: key.key == m.kGenre
            }
        if count == 0 {
            firstID = m.id
            name =
                switch key.kind {
                case .album: m.album
                case .albumArtist: m.artist
                case .artist: display ? m.artist : m.artists.first { $0.key == key.key }?.name
                case .composer: display ? m.composer : m.composers.first { $0.key == key.key }?.name
                case .genre: display ? m.genre : m.genres.first { $0.key == key.key }?.name
                }
            ownerName = m.albumOwner.name
        }
        count += 1
        duration += m.duration ?? 0
        let (tag, text): ([UInt8]?, String?) =
            switch key.kind {
            case _ where !display: (nil, nil)
            case .album: (m.albumTag, m.albumSort)
            case .artist, .albumArtist: (m.artistTag, m.artistSort)
            case .composer: (m.composerTag, m.composerSort)
            case .genre: (nil, nil)
            }
        if let tag { tags[tag, default: (0, text)].count += 1 }
        if key.kind == .album {
            let owner = m.albumOwner
            if let tag = owner.tag { ownerTags[tag, default: (0, owner.sort)].count += 1 }
            for credit in m.albumOwners where ownerKeys.insert(credit.key).inserted { owners.append(credit) }
            if let value = m.year { year = max(year ?? value, value) }
            created = min(created, m.added)
            if m.kGenre != SortKey.missingKey {
                genres[m.kGenre, default: (0, m.genre)].count += 1
            }
            if m.hasArtwork {
                let candidate = (m.disc ?? Int.max, m.track ?? Int.max, m.id)
                if artwork.map({ candidate < $0 }) ?? true { artwork = candidate }
            }
        } else {
            albums.insert(m.kAlbum)
        }
    }

    func row() -> GroupRow {
        let kName = key.album ?? key.key
        let sort = GroupRow.majority(tags)
        var row = GroupRow(
            id: key.id, kind: key.kind, name: name ?? "", kName: kName, sName: sort?.key ?? kName, sortName: sort?.text,
            trackCount: count, albumCount: key.kind == .album ? 1 : albums.count, duration: duration, firstTrack: firstID)
        if key.kind == .album {
            let ownerSort = GroupRow.majority(ownerTags)
            row.artist = ownerName
            row.artistKey = key.key
            // The owner first when it is one of the album's artists; else (a joined credit such
            // as "A & B" with a list naming A and B) the album's ID names the first of them.
            var owners = owners
            if let index = owners.firstIndex(where: { $0.key == key.key }), index > 0 { owners.insert(owners.remove(at: index), at: 0) }
            row.owners = owners
            row.artistID = GroupKey(kind: .albumArtist, key: owners.first?.key ?? key.key).id
            row.sArtist = ownerSort?.key ?? key.key
            row.artistSort = ownerSort?.text
            row.year = year
            if let genreKey = GroupRow.majority(genres.mapValues(\.count)) { row.genre = genres[genreKey]?.name }
            row.artworkTrack = artwork?.id
            row.created = created
        }
        return row
    }
}

/// Every group's accumulator during one pass over all tracks (in ID order).
struct GroupAccumulators {
    private var table: [GroupKey: GroupAccumulator] = [:]

    mutating func add(_ member: GroupMember) {
        for key in member.groups { table[key, default: GroupAccumulator(key)].add(member) }
    }

    /// The rows of every track-level group, then the album artists made from the albums (an
    /// album of several album artists counts under each).
    func rows() -> [GroupRow] {
        let rows = table.values.map { $0.row() }
        var byOwner: [[UInt8]: [GroupRow]] = [:]
        for album in rows where album.kind == .album {
            for owner in album.ownerList { byOwner[owner.key, default: []].append(album.owned(by: owner)) }
        }
        return rows + byOwner.map { GroupRow.aggregate(albumArtist: $0.key, albums: $0.value) }
    }
}

/// Keeps `mirror_group` current: recomputes exactly the groups a change touched, each from its
/// members read through an index (never a scan of the library).
enum MirrorGroups {
    /// The members of a track-level group, read from `mirror_track` through a sort index.
    static func members(of key: GroupKey, in db: Connection, options: SortKeyOptions = SortKeyOptions()) throws -> [GroupMember] {
        let (condition, arguments): (String, [(any SQLiteBindable)?]) =
            switch key.kind {
            case .album:
                key.key == GroupMember.variousArtistsKey
                    ? ("k_album = ? AND (compilation = 1 OR \(ownerKey) = ?)", [Data(key.album!), Data(key.key)])
                    : ("k_album = ? AND compilation = 0 AND \(ownerKey) = ?", [Data(key.album!), Data(key.key)])
            case .artist, .albumArtist: ("k_artist = ? OR \(MirrorLists.credited(.artist))", [Data(key.key), Data(key.key)])
            case .composer: ("k_composer = ? OR \(MirrorLists.credited(.composer))", [Data(key.key), Data(key.key)])
            case .genre: ("k_genre = ? OR \(MirrorLists.credited(.genre))", [Data(key.key), Data(key.key)])
            }
        // The display value's rows include tracks whose lists credit others instead.
        return try db.query("SELECT \(GroupMember.columns) FROM mirror_track WHERE \(condition)", arguments) {
            try GroupMember(row: $0, options: options)
        }.filter { $0.groups.contains(key) }
    }

    private static let ownerKey = "(CASE WHEN k_album_artist = x'FF' THEN k_artist ELSE k_album_artist END)"

    /// The album artists album `id` files under, as `mirror_album_owner` holds them.
    private static func owners(of id: GroupID, in db: Connection) throws -> [GroupMember.Credit] {
        try db.query("SELECT k_artist, name FROM mirror_album_owner WHERE album_id = ?", [id.rawValue]) {
            GroupMember.Credit(key: try $0.bytes(0), name: try $0.string(1))
        }
    }

    /// Records an album row's album artists.
    private static func writeOwners(_ row: GroupRow, in db: Connection) throws {
        let statement = try db.cachedStatement("INSERT OR REPLACE INTO mirror_album_owner (artist_id, album_id, k_artist, name) VALUES (?, ?, ?, ?)")
        for owner in row.ownerList {
            try statement.bind([GroupKey(kind: .albumArtist, key: owner.key).id.rawValue, row.id.rawValue, Data(owner.key), owner.name])
            try statement.run()
        }
    }

    private static let upsert =
        "INSERT OR REPLACE INTO mirror_group (\(GroupRow.columns)) VALUES (\(Array(repeating: "?", count: Int(GroupRow.columnCount)).joined(separator: ", ")))"

    /// Groups smaller than this are always recomputed at once: their members cost less to read
    /// than the bookkeeping of waiting.
    static let deferrableSize = 256

    /// Recomputes track-level groups, then the album artists whose albums changed. `changes` counts
    /// the touched members of each group (albums for an album artist).
    ///
    /// With `deferLarge` (during an import), a group of `deferrableSize` or more waits in
    /// `mirror_group_pending` until the members changed since its last recompute reach an eighth
    /// of its size: recomputing a 50,000-track genre for every 500-file chunk made a first import
    /// quadratic (322 → 162 files/s by 220,000 files). A waiting group's row is at most an eighth
    /// behind; `flushPending` (the import's end, and every sync without `deferLarge`) makes it exact.
    static func refresh(_ changes: [GroupKey: Int], in db: Connection, deferLarge: Bool = false) throws {
        var sections = SectionCounts()
        var ownerChanges: [[UInt8]: Int] = [:]
        func replace(_ kind: GroupKind, _ id: GroupID, with row: GroupRow?) throws {
            if let old = try db.queryOne(
                "SELECT k_name, s_name FROM mirror_group WHERE kind = ? AND id = ?", [kind.code, id.rawValue],
                {
                    ([UInt8](try $0.data(0)), [UInt8](try $0.data(1)))
                })
            {
                sections.add(kind, old.0, old.1, -1)
            }
            if let row {
                try db.execute(upsert, row.values)
                sections.add(kind, row.kName, row.sName, 1)
            } else {
                try db.execute("DELETE FROM mirror_group WHERE kind = ? AND id = ?", [kind.code, id.rawValue])
            }
            guard kind == .album else { return }
            // The album artists it filed under and files under now all change.
            for owner in try owners(of: id, in: db) { ownerChanges[owner.key, default: 0] += 1 }
            try db.execute("DELETE FROM mirror_album_owner WHERE album_id = ?", [id.rawValue])
            if let row { try writeOwners(row, in: db) }
            for owner in row?.ownerList ?? [] { ownerChanges[owner.key, default: 0] += 1 }
        }
        var due = Set<GroupKey>()
        if deferLarge {
            for (key, count) in changes where key.kind != .albumArtist {
                if try isDue(key, count, in: db) { due.insert(key) }
            }
        } else {
            due = Set(changes.keys.filter { $0.kind != .albumArtist })
            for key in try takeAllPending(in: db) {
                if key.kind == .albumArtist { ownerChanges[key.key, default: 0] += 1 } else { due.insert(key) }
            }
        }
        for key in due {
            let members = try Self.members(of: key, in: db)
            try replace(key.kind, key.id, with: members.isEmpty ? nil : GroupRow.aggregate(key, members))
        }
        for (owner, count) in ownerChanges {
            let key = GroupKey(kind: .albumArtist, key: owner)
            if deferLarge, try !isDue(key, count, in: db) { continue }
            let albums = try db.query(
                """
                SELECT \(GroupRow.columns.split(separator: ",").map { "g." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")),
                  o.name FROM mirror_album_owner o JOIN mirror_group g ON g.kind = 0 AND g.id = o.album_id
                WHERE o.artist_id = ? AND o.k_artist = ?
                """, [key.id.rawValue, Data(owner)]
            ) { row in
                try GroupRow(row: row).owned(by: GroupMember.Credit(key: owner, name: try row.string(GroupRow.columnCount)))
            }
            try replace(.albumArtist, key.id, with: albums.isEmpty ? nil : GroupRow.aggregate(albumArtist: owner, albums: albums))
        }
        try sections.flush(to: db)
    }

    /// Whether a group is recomputed now (then it no longer waits) or waits with `count` more
    /// changed members (see `refresh`).
    private static func isDue(_ key: GroupKey, _ count: Int, in db: Connection) throws -> Bool {
        let column = key.kind == .albumArtist ? "album_count" : "track_count"
        let size =
            try db.queryOne("SELECT \(column) FROM mirror_group WHERE kind = ? AND id = ?", [key.kind.code, key.id.rawValue]) {
                try $0.int64(0)
            } ?? 0
        let waiting =
            try db.queryOne("SELECT waiting FROM mirror_group_pending WHERE kind = ? AND id = ?", [key.kind.code, key.id.rawValue]) {
                try $0.int64(0)
            } ?? 0
        if size < deferrableSize || (waiting + Int64(count)) * 8 >= size {
            if waiting > 0 { try db.execute("DELETE FROM mirror_group_pending WHERE kind = ? AND id = ?", [key.kind.code, key.id.rawValue]) }
            return true
        }
        try db.execute(
            """
            INSERT INTO mirror_group_pending (kind, id, key, album, waiting) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (kind, id) DO UPDATE SET waiting = waiting + excluded.waiting
            """, [key.kind.code, key.id.rawValue, Data(key.key), key.album.map { Data($0) }, Int64(count)])
        return false
    }

    /// Every waiting group, removed from the waiting list (the caller recomputes them in the same transaction).
    private static func takeAllPending(in db: Connection) throws -> [GroupKey] {
        let keys = try db.query("SELECT kind, key, album FROM mirror_group_pending") { row -> GroupKey? in
            let code = try row.int64(0)
            guard let kind = GroupKind.allCases.first(where: { $0.code == code }) else { return nil }
            return GroupKey(kind: kind, key: [UInt8](try row.data(1)), album: row.isNull(2) ? nil : [UInt8](try row.data(2)))
        }.compactMap { $0 }
        if !keys.isEmpty { try db.execute("DELETE FROM mirror_group_pending") }
        return keys
    }

    /// Recomputes every group that is waiting (see `refresh`); a no-op when none is.
    static func flushPending(in db: Connection) throws {
        try refresh([:], in: db, deferLarge: false)
    }

    /// Rows per section of each view, in both orders (display names and sort names), kept by
    /// sync so that a view's sections and total never count its rows.
    struct SectionCounts {
        private var deltas: [[Int64]: Int] = [:]

        mutating func add(_ kind: GroupKind, _ kName: [UInt8], _ sName: [UInt8], _ delta: Int) {
            deltas[[kind.code, 0, Int64(kName.first ?? 0xFF)], default: 0] += delta
            deltas[[kind.code, 1, Int64(sName.first ?? 0xFF)], default: 0] += delta
        }

        func flush(to db: Connection) throws {
            let statement = try db.cachedStatement(
                """
                INSERT INTO mirror_group_section (kind, tags, section, count) VALUES (?, ?, ?, ?)
                ON CONFLICT (kind, tags, section) DO UPDATE SET count = count + excluded.count
                """)
            for (key, delta) in deltas where delta != 0 {
                try statement.bind([key[0], key[1], key[2], Int64(delta)])
                try statement.run()
            }
        }
    }

    /// Every group, computed after a bulk build in one pass over the tracks in ID order (the
    /// same accumulators sync uses per group): a lookup per group and member took minutes.
    static func build(in db: Connection, cancelled: () -> Bool) throws {
        var accumulators = GroupAccumulators()
        var seen = 0
        try db.forEachRow("SELECT \(GroupMember.columns) FROM mirror_track ORDER BY id") { row in
            accumulators.add(try GroupMember(row: row))
            seen += 1
            if seen % 50_000 == 0, cancelled() { throw CancellationError() }
        }
        let rows = accumulators.rows()
        try db.execute("DELETE FROM mirror_group")
        try db.execute("DELETE FROM mirror_group_section")
        try db.execute("DELETE FROM mirror_group_pending")
        try db.execute("DELETE FROM mirror_album_owner")
        var sections = SectionCounts()
        for row in rows { sections.add(row.kind, row.kName, row.sName, 1) }
        try db.transaction { try sections.flush(to: db) }
        for chunk in stride(from: 0, to: rows.count, by: 5_000) {
            if cancelled() { throw CancellationError() }
            try db.transaction {
                let statement = try db.cachedStatement(upsert)
                for row in rows[chunk..<min(rows.count, chunk + 5_000)] {
                    try statement.bind(row.values)
                    try statement.run()
                    if row.kind == .album { try writeOwners(row, in: db) }
                }
            }
        }
    }
}

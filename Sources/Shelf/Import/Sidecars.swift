import Foundation
import ShelfCore

/// Which comes first when both the audio file and a file beside it give a track its picture or
/// its lyrics.
public enum SidecarOrder: String, Sendable, Codable, CaseIterable {
    /// The file's own embedded picture or lyrics; the files beside it stand in for missing ones.
    /// The default: Shelf's editor writes into the file, so an edit shows.
    case embedded
    /// The files beside the audio (`cover.jpg`, `NAME.lrc`); embedded ones stand in (Navidrome's order).
    case files
}

/// How the library reads its folders: the separators of single-value tags and the order of
/// pictures and lyrics beside the audio. Kept in the library, so that `shelf import` and the
/// server's scans read the same folders alike.
public struct ImportSettings: Sendable, Codable, Equatable {
    /// Where a single artist, album-artist, composer or role tag splits into names.
    public var nameSeparators: [String]
    /// Where a single genre, mood or release-type tag splits.
    public var genreSeparators: [String]
    /// Folder pictures (`cover.*`, …) against embedded ones.
    public var pictures: SidecarOrder
    /// Lyrics files (`NAME.lrc`, `NAME.txt`) against embedded lyrics.
    public var lyrics: SidecarOrder

    /// The documented defaults: `TagSeparators.standard`, embedded pictures and lyrics first.
    public static let standard = ImportSettings(
        nameSeparators: TagSeparators.standard.names, genreSeparators: TagSeparators.standard.genres, pictures: .embedded, lyrics: .embedded)

    /// Settings as given.
    public init(nameSeparators: [String], genreSeparators: [String], pictures: SidecarOrder, lyrics: SidecarOrder) {
        self.nameSeparators = nameSeparators
        self.genreSeparators = genreSeparators
        self.pictures = pictures
        self.lyrics = lyrics
    }

    /// The separators as the tag reader takes them.
    public var separators: TagSeparators { TagSeparators(names: nameSeparators, genres: genreSeparators) }

    private enum CodingKeys: String, CodingKey { case nameSeparators, genreSeparators, pictures, lyrics }

    /// A stored value; a key a newer or older build did not write keeps its default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let standard = Self.standard
        nameSeparators = try c.decodeIfPresent([String].self, forKey: .nameSeparators) ?? standard.nameSeparators
        genreSeparators = try c.decodeIfPresent([String].self, forKey: .genreSeparators) ?? standard.genreSeparators
        pictures = try c.decodeIfPresent(SidecarOrder.self, forKey: .pictures) ?? standard.pictures
        lyrics = try c.decodeIfPresent(SidecarOrder.self, forKey: .lyrics) ?? standard.lyrics
    }
}

extension Library {
    static let importSettingsKey = "import_settings"

    /// The settings imports and scans of this library use (`ImportSettings.standard` until set).
    public func importSettings() async throws -> ImportSettings {
        let text = try await read { db in try db.scalar(String.self, "SELECT value FROM meta WHERE key = ?", [Self.importSettingsKey]) }
        guard let text else { return .standard }
        do {
            return try JSONDecoder().decode(ImportSettings.self, from: Data(text.utf8))
        } catch {
            throw LibraryError.invalidValue(field: Self.importSettingsKey, value: text, reason: "the stored import settings cannot be read (\(error))")
        }
    }

    /// Keeps `settings` for every later import and scan of this library.
    public func setImportSettings(_ settings: ImportSettings) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(settings), as: UTF8.self)
        try await write { batch in
            try batch.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [Self.importSettingsKey, json])
        }
    }
}

/// A directory's entries, read once for every lookup of the files beside the audio in it.
struct FolderListing: Sendable {
    let directory: URL
    /// Entry names as the file system spells them, by their lower-cased name.
    let entries: [String: String]
    /// The album pictures' stamp (`PictureFiles.stamp`), taken once: every track of the folder's
    /// `SidecarStamp` holds it.
    private(set) var albumPictures = ""

    /// The entries of `directory` (none when it cannot be read).
    init(_ directory: URL) {
        self.init(directory, path: directory.path)
    }

    /// The same, with the directory's path already at hand.
    init(_ directory: URL, path: String) {
        self.directory = directory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        // Two entries that differ only in case: the first in byte order, so the choice is stable.
        var entries: [String: String] = [:]
        for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) where entries[name.lowercased()] == nil {
            entries[name.lowercased()] = name
        }
        self.entries = entries
        // Most folders hold no lyrics file: then a track's lyrics stamp is one empty check.
        var lyrics: [String: [String]] = [:]
        for ext in LyricsFile.extensions {
            for (lower, name) in entries where lower.hasSuffix("." + ext) {
                lyrics[String(lower.dropLast(ext.count + 1)), default: []].append(name)
            }
        }
        lyricsByStem = lyrics
        albumPictures = PictureFiles.album.stamp(in: self)
    }

    /// The lyrics files (`LyricsFile.extensions`, in their order) by their lower-cased stem.
    let lyricsByStem: [String: [String]]

    /// The entry named `name` in any case, as spelled on disk.
    func entry(_ name: String) -> String? { entries[name.lowercased()] }

    /// `entry:size:mtime` of a regular file, which changes whenever the file is replaced or rewritten.
    func stamp(_ entry: String) -> String? {
        // A link counts as the file it names (attributesOfItem describes the link itself).
        let path = directory.appendingPathComponent(entry).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            (attributes[.type] as? FileAttributeType) == .typeRegular
        else { return nil }
        let size = (attributes[.size] as? Int) ?? 0
        let modified = ((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0) * 1000
        return "\(entry):\(size):\(Int64(modified.rounded()))"
    }
}

/// The folder listings of one import, each read once however many files share the folder.
struct FolderListings {
    private var cache: [String: FolderListing] = [:]

    /// The listing of `directory`, read on first use.
    mutating func of(_ directory: URL) -> FolderListing { of(path: directory.path) }

    /// The listing of the directory at `path`: a rescan looks a folder up per file, and a path
    /// string costs a dictionary probe where a URL's `path` is parsed again each time.
    mutating func of(path: String) -> FolderListing {
        if let known = cache[path] { return known }
        // Imports walk folder by folder: a bounded cache keeps memory flat over 40,000 folders.
        if cache.count >= 4096 { cache.removeAll(keepingCapacity: true) }
        let listing = FolderListing(URL(fileURLWithPath: path, isDirectory: true), path: path)
        cache[path] = listing
        return listing
    }
}

/// Picture files beside the audio: an album folder's `cover.*`, `folder.*`, `front.*` or
/// `album.*`, an artist folder's `artist.*` (JPEG, PNG or WebP, names in any case), the first in
/// the names' order that is a picture within the decoder's limits.
struct PictureFiles {
    static let album = PictureFiles(names: ["cover", "folder", "front", "album"])
    static let artist = PictureFiles(names: ["artist"])
    static let extensions = ["jpg", "jpeg", "png", "webp"]
    /// Larger files are not album pictures anyone meant to serve.
    static let maxBytes = 32 << 20

    let names: [String]

    /// The candidate entries of `listing`, in the order they are tried.
    func candidates(in listing: FolderListing) -> [String] {
        names.flatMap { name in Self.extensions.compactMap { listing.entry("\(name).\($0)") } }
    }

    /// What changes when any candidate is added, replaced or removed ("" with none).
    func stamp(in listing: FolderListing) -> String {
        candidates(in: listing).compactMap(listing.stamp).joined(separator: ",")
    }

    /// The picture of `listing`'s folder (its path and bytes), and what was wrong with the
    /// candidates passed over.
    func find(in listing: FolderListing) -> (picture: (path: String, data: Data)?, problems: [ImportReport.Failure]) {
        var problems: [ImportReport.Failure] = []
        for entry in candidates(in: listing) {
            let path = listing.directory.appendingPathComponent(entry).path
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: URL(fileURLWithPath: path).resolvingSymlinksInPath().path),
                (attributes[.type] as? FileAttributeType) == .typeRegular
            else { continue }
            if let size = attributes[.size] as? Int, size > Self.maxBytes {
                problems.append(.init(path: path, error: "\(path): picture file of \(size) bytes is beyond \(Self.maxBytes); left out"))
                continue
            }
            guard let data = FileContents.read(path) else {
                problems.append(.init(path: path, error: "\(path): picture file cannot be read; left out"))
                continue
            }
            do throws(ImageError) {
                let size = try ImageCodec.dimensions(of: data)
                let limits = ImageLimits()
                guard size.width <= limits.maxSide, size.height <= limits.maxSide, size.width * size.height <= limits.maxPixels else {
                    throw ImageError.tooLarge(width: size.width, height: size.height, limits: limits)
                }
                return ((path, data), problems)
            } catch {
                problems.append(.init(path: path, error: "\(path): picture file left out: \(error)"))
            }
        }
        return (nil, problems)
    }
}

/// Lyrics beside the audio: `NAME.lrc` (synced, LRC) else `NAME.txt` (plain) next to `NAME.flac`
/// (extension in any case). UTF-8, a BOM dropped, at most 1 MiB; one that is not UTF-8 is
/// reported and left out.
enum LyricsFile {
    static let extensions = ["lrc", "txt"]
    static let maxBytes = 1 << 20

    /// The candidate entries beside `audio`, in the order they are tried.
    static func candidates(beside audio: URL, in listing: FolderListing) -> [String] {
        candidates(besidePath: audio.path, in: listing)
    }

    /// The same for the audio file at `path`.
    static func candidates(besidePath path: String, in listing: FolderListing) -> [String] {
        guard !listing.lyricsByStem.isEmpty else { return [] }
        return listing.lyricsByStem[FilePath.stem(of: path).lowercased()] ?? []
    }

    /// What changes when a lyrics file beside the audio at `path` is added, replaced or removed ("" with none).
    static func stamp(besidePath path: String, in listing: FolderListing) -> String {
        candidates(besidePath: path, in: listing).compactMap(listing.stamp).joined(separator: ",")
    }

    /// The text of the lyrics file beside `audio`, and what was wrong with one passed over.
    static func find(beside audio: URL, in listing: FolderListing) -> (text: String?, problem: ImportReport.Failure?) {
        for entry in candidates(beside: audio, in: listing) {
            let path = listing.directory.appendingPathComponent(entry).path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            guard let data = FileContents.read(path), data.count <= maxBytes else {
                return (nil, .init(path: path, error: "\(path): lyrics file unreadable or over \(maxBytes) bytes; left out"))
            }
            guard let text = LegacyText.decode(data)?.text else {
                return (nil, .init(path: path, error: "\(path): lyrics file \(LegacyText.refusal); left out"))
            }
            return (SortKey.isBlank(text) ? nil : text, nil)
        }
        return (nil, nil)
    }
}

/// Path strings cut where `URL` would parse them again.
enum FilePath {
    /// The directory part of `path` ("/" for a file at the root; "." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of `path` without its extension, as `deletingPathExtension` gives it
    /// (a leading dot is a name, not an extension).
    static func stem(of path: String) -> Substring {
        let name = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { path[path.index(after: $0)...] } ?? path[...]
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return name }
        return name[..<dot]
    }
}

/// What an imported track took from beside its file, so that a rescan notices a picture or
/// lyrics file added, replaced or removed next to unchanged audio (stored in `track.sidecars`).
enum SidecarStamp {
    /// The stamp of `audio` under `settings` ("" when nothing beside it could count, as for a
    /// track imported before stamps were kept).
    static func of(_ audio: URL, in listing: FolderListing, settings: ImportSettings) -> String {
        of(path: audio.path, in: listing, settings: settings)
    }

    /// The same for the audio file at `path`.
    static func of(path: String, in listing: FolderListing, settings: ImportSettings) -> String {
        let picture = listing.albumPictures
        let lyrics = LyricsFile.stamp(besidePath: path, in: listing)
        // An image's sheets: a sheet written or added re-reads the image's tracks.
        let sheets =
            CueImages.imageExtensions.contains(AudioScanner.pathExtension(path))
            ? listing.entries.values.sorted().filter { AudioScanner.pathExtension($0) == "cue" }.compactMap { listing.stamp($0) }.joined(separator: ",")
            : ""
        if picture.isEmpty, lyrics.isEmpty, sheets.isEmpty { return "" }
        // The order is part of it: changing the setting re-reads the tracks it can change.
        return "p=\(settings.pictures.rawValue);\(picture)|l=\(settings.lyrics.rawValue);\(lyrics)" + (sheets.isEmpty ? "" : "|c=\(sheets)")
    }
}

/// `artist.*` pictures: the picture of the album artist (else the artist) whose albums a folder
/// holds, found in the folder above the album's when that lies inside the folders imported (the
/// artist's folder in `Artist/Album/01.flac`), else in the album's own folder. Stored in
/// `artist_picture` by the album artist's view ID; served for `ar-` IDs and on `/api/`.
enum ArtistPictures {
    /// The artist an album's picture belongs to: a name and its MusicBrainz ID, as the views
    /// tell artists apart.
    struct Owner: Hashable, Sendable {
        let name: String
        let musicBrainzID: String?
    }

    /// The artist an album's artist picture belongs to; nil when it has none.
    static func owner(albumArtist: String?, artist: String?, ids: TrackDetails.CreditLists) -> Owner? {
        if let albumArtist, !SortKey.isBlank(albumArtist) { return Owner(name: albumArtist, musicBrainzID: ids.displayAlbumArtistID) }
        guard let artist, !SortKey.isBlank(artist) else { return nil }
        return Owner(name: artist, musicBrainzID: ids.displayArtistID)
    }

    /// The album folders of each owner met in one chunk.
    struct Owners {
        fileprivate var byID: [GroupID: (name: String, folders: [String])] = [:]
        /// Each owner's ID, computed once per chunk (a rescan meets the same owner per file).
        private var ids: [Owner: GroupID] = [:]

        /// Notes that `owner`'s album lies in `folder`.
        mutating func add(_ owner: Owner, folder: URL) { add(owner, folderPath: folder.path) }

        /// Notes that `owner`'s album lies in the folder at `folderPath`.
        mutating func add(_ owner: Owner, folderPath: String) {
            let id: GroupID
            if let known = ids[owner] {
                id = known
            } else {
                id = Library.artistID(named: owner.name, musicBrainzID: owner.musicBrainzID)
                ids[owner] = id
            }
            if var entry = byID[id] {
                if entry.folders.last != folderPath && !entry.folders.contains(folderPath) { entry.folders.append(folderPath) }
                byID[id] = entry
            } else {
                byID[id] = (owner.name, [folderPath])
            }
        }
    }

    /// One artist's picture as it is to be stored.
    struct Picture: Sendable {
        let albumArtist: GroupID
        let artist: GroupID
        let name: String
        let path: String
        let stamp: String
        let data: Data
    }

    /// What a chunk changes among the artist pictures.
    struct Changes: Sendable {
        var pictures: [Picture] = []
        var removed: [GroupID] = []
        var problems: [ImportReport.Failure] = []
        var isEmpty: Bool { pictures.isEmpty && removed.isEmpty }

        /// Writes the changes in the chunk's transaction.
        @LibraryActor
        func apply(in batch: WriteBatch) throws {
            for picture in pictures {
                try batch.setArtistPicture(
                    albumArtist: picture.albumArtist, artist: picture.artist, name: picture.name, picture: picture.data, path: picture.path,
                    stamp: picture.stamp)
            }
            for id in removed { try batch.removeArtistPicture(albumArtist: id) }
        }
    }

    /// The folders where `album`'s artist picture may be, in the order they are tried.
    static func folders(of albums: [URL], roots: [URL]) -> [URL] {
        let parents = albums.map { $0.deletingLastPathComponent() }.filter { parent in
            roots.contains { parent.path.hasPrefix($0.standardizedFileURL.path + "/") }
        }
        var seen = Set<String>()
        return (parents + albums).filter { seen.insert($0.path).inserted }
    }

    /// The pictures to store or forget for `owners`: a new, replaced or removed `artist.*` file
    /// against what the library holds; an unchanged file is not read again. A file that is no
    /// picture is reported on every scan that meets it, as folder pictures are.
    static func changes(for owners: Owners, roots: [URL], listings: inout FolderListings, in library: Library) async throws -> Changes {
        guard !owners.byID.isEmpty else { return Changes() }
        let list = "[" + owners.byID.keys.map { String($0.rawValue) }.joined(separator: ",") + "]"
        let stored: [GroupID: (path: String, stamp: String)] = try await library.read { db in
            var stored: [GroupID: (String, String)] = [:]
            try db.forEachRow("SELECT album_artist_id, path, stamp FROM artist_picture WHERE album_artist_id IN (SELECT value FROM json_each(?))", [list]) {
                stored[GroupID(rawValue: try $0.int64(0))] = (try $0.string(1), try $0.string(2))
            }
            return stored
        }
        var changes = Changes()
        for (id, owner) in owners.byID {
            let candidates = folders(of: owner.folders.map { URL(fileURLWithPath: $0, isDirectory: true) }, roots: roots)
            let old = stored[id]
            let oldFolder = old.map { URL(fileURLWithPath: $0.path).deletingLastPathComponent().path }
            var found: Picture?
            var unchanged = false
            // The stored picture stays while its file is there unchanged: another folder's
            // `artist.*` met by a later chunk does not take its place, so scans never flip-flop.
            if let old, let oldFolder {
                let folder = URL(fileURLWithPath: oldFolder)
                if old.stamp == oldFolder + "|" + PictureFiles.artist.stamp(in: listings.of(folder)) { continue }
            }
            for folder in candidates {
                let listing = listings.of(folder)
                let stamp = PictureFiles.artist.stamp(in: listing)
                guard !stamp.isEmpty else { continue }
                let key = folder.path + "|" + stamp
                if old?.stamp == key {
                    unchanged = true
                    break
                }
                let result = PictureFiles.artist.find(in: listing)
                changes.problems += result.problems
                if let picture = result.picture {
                    found = Picture(
                        // Artists and album artists share their IDs (`GroupKey.id`).
                        albumArtist: id, artist: id,
                        name: owner.name, path: picture.path, stamp: key, data: picture.data)
                    break
                }
            }
            if let found {
                changes.pictures.append(found)
            } else if !unchanged, let oldFolder, candidates.contains(where: { $0.path == oldFolder }) {
                // The file it came from is gone or no longer a picture, in a folder this chunk looked at.
                changes.removed.append(id)
            }
        }
        return changes
    }
}

extension Library {
    /// Forgets the `artist.*` pictures whose files are gone (their artists may have no tracks left
    /// to look at them), so that their artwork is collected.
    func pruneArtistPictures() async throws {
        let rows = try await read { db in
            try db.query("SELECT album_artist_id, path FROM artist_picture", []) { (GroupID(rawValue: try $0.int64(0)), try $0.string(1)) }
        }
        let gone = rows.filter { !FileManager.default.fileExists(atPath: $0.1) }.map(\.0)
        guard !gone.isEmpty else { return }
        try await write { batch in for id in gone { try batch.removeArtistPicture(albumArtist: id) } }
    }
}

import Foundation
import Shelf
import ShelfCore

/// Folder browsing (`subsonic-browse = folders`, the default), as the original Subsonic does it:
/// getIndexes lists the top folders of each library the user sees by section, and
/// getMusicDirectory walks down from them to the songs.
extension SubsonicAPI {
    /// getIndexes over folders: the child folders of every visible root (a library of one root
    /// shows what is in it; the roots themselves are not a level), by section and name, with the
    /// files lying in a root as `child` songs.
    func folderIndexes(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let last = Int(((try await library.lastChangeDate())?.timeIntervalSince1970 ?? 0) * 1000)
        if let since = try call.parameters.int("ifModifiedSince", in: 0...Int.max), last <= since {
            return .body { w in
                w.open("indexes")
                w.attribute("ignoredArticles", Self.ignoredArticles)
                w.attribute("lastModified", last)
                w.close()
            }
        }
        var folders: [Folder] = []
        var files: [TrackID] = []
        for root in try await library.rootFolders() {
            // No pictures in the index: thousands of folders, a probe each (their directories have them).
            guard let contents = try await library.folder(root.id, pictures: false) else { continue }
            folders += contents.folders
            files += contents.tracks
        }
        // The engine's sections and order (articles skipped, kana rows), by the folder's name.
        let keyed = folders.map { (key: SortKey.textKey($0.name), folder: $0) }.sorted { a, b in
            a.key != b.key ? a.key.lexicographicallyPrecedes(b.key) : a.folder.path < b.folder.path
        }
        var indexes: [SubsonicIndex<SubsonicFolderEntry>] = []
        for (key, folder) in keyed {
            let section = SortKey.section(ofKey: key)
            if indexes.last?.name != section { indexes.append(SubsonicIndex(name: section, artists: [])) }
            indexes[indexes.count - 1].artists.append(SubsonicFolderEntry(folder: folder))
        }
        let songs = try await folderSongs(files, for: user)
        return .body { [indexes] w in
            w.open("indexes")
            w.attribute("ignoredArticles", Self.ignoredArticles)
            w.attribute("lastModified", last)
            w.list("index", indexes)
            w.list("child", songs)
            w.close()
        }
    }

    /// getMusicDirectory of a folder: its child folders (with their pictures), then its songs
    /// in file-name order, each with the folder as its parent.
    func folderDirectory(_ id: FolderID, user: User) async throws -> SubsonicReply {
        guard let contents = try await library.folder(id) else { throw SubsonicError.notFound("directory fo-\(id)") }
        let songs = try await folderSongs(contents.tracks, for: user)
        return .element(
            "directory",
            SubsonicFolderDirectory(folder: contents.folder, folders: contents.folders.map { SubsonicFolderEntry(folder: $0, child: true) }, songs: songs))
    }

    /// The songs of `ids` with their folder as parent and their path under their library's root.
    func folderSongs(_ ids: [TrackID], for user: User) async throws -> [SubsonicSong] {
        let roots = try await library.libraries().flatMap(\.roots).sorted { $0.count > $1.count }
        return try await songs(ids, for: user).map { song in
            var song = song
            let path = song.track.filePath
            let root = roots.first { Library.isPath(path, under: $0) }
            let relative = root.map { path == $0 ? path : String(path.dropFirst($0 == "/" ? 1 : $0.count + 1)) } ?? path
            let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? path
            song.folder = (SubsonicID.folder(FolderID(path: folder.isEmpty ? "/" : folder)), relative)
            return song
        }
    }
}

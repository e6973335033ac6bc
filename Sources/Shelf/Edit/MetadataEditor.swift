import Foundation
import ShelfCore
import ShelfDatabase

/// What an edit form starts from: the stored values, the picture, and the file's own tags.
public struct MetadataDraft: Sendable {
    /// Where the draft's values and picture came from.
    public enum Source: String, Sendable, Codable {
        /// The library's values and picture.
        case library
        /// The stored picture failed to load, so title, artist, album, lyrics and the picture
        /// were read from the file itself.
        case file
    }

    /// The values to edit (the library's, or the file's where `source` is `file`).
    public var track: Track
    /// The picture, decoded to the asked size; nil when there is none.
    public var picture: DecodedImage?
    public var source: Source
    /// The file's tags as they are on disk; nil when the file cannot be read.
    public var fileTags: AudioFileTags?
}

/// The outcome of a batch edit, item by item.
public struct EditResult: Sendable, Equatable {
    /// An item not written because its draft became invalid or the edit was cancelled.
    public struct Skipped: Sendable, Equatable, Codable {
        public var id: TrackID
        public var reason: String
    }

    /// An item whose file could not be written (the file is unchanged).
    public struct Failed: Sendable, Equatable, Codable {
        public var id: TrackID
        /// The file as it was named before the edit.
        public var path: String
        public var error: String
    }

    public var updated: [TrackID] = []
    public var skipped: [Skipped] = []
    public var failed: [Failed] = []
}

extension Library {
    /// A draft for editing a track: its stored values and picture (through `loader`, the shared
    /// one by default), and the file's tags. When the stored picture fails with an ordinary
    /// error, the file supplies the title, artist, album, lyrics and picture instead. A cancelled
    /// task, or a request made invalid while it waited (track deleted, picture replaced), throws
    /// `CancellationError`, and no file is parsed after it.
    public func editableDraft(for id: TrackID, loader: ArtworkLoader? = nil, pictureSize: Int = 600) async throws -> MetadataDraft {
        try Task.checkCancellation()
        guard var track = try await track(id) else { throw LibraryError.trackNotFound(id) }
        var picture: DecodedImage?
        var source = MetadataDraft.Source.library
        if let artworkID = track.artworkID {
            do {
                picture = try await (loader ?? artwork).image(for: ArtworkRequest(trackID: id, artworkID: artworkID), maxPixelSize: pictureSize)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                source = .file
            }
        }
        try Task.checkCancellation()
        let fileTags = try? TagFile.read(URL(fileURLWithPath: track.path))
        if source == .file, let fileTags {
            let fromFile = fileTags.track(path: track.path)
            track.title = fromFile.title ?? track.title
            track.artist = fromFile.artist ?? track.artist
            track.album = fromFile.album ?? track.album
            track.lyrics = fromFile.lyrics ?? track.lyrics
            picture = fileTags.picture.flatMap { try? ImageCodec.decode($0, maxPixelSize: pictureSize) }
        }
        return MetadataDraft(track: track, picture: picture, source: source, fileTags: fileTags)
    }

    /// Applies `changes` to each track: its file is rewritten atomically (`AtomicRewrite`), then
    /// the library is updated in one transaction for every file written. An item whose draft
    /// request becomes invalid is skipped; once the task is cancelled, no further file is
    /// written (the ones already renamed into place are still recorded, so files and library
    /// agree). A failed item names its file and the reason; its file is unchanged.
    public func edit(_ ids: [TrackID], _ changes: MetadataChanges, loader: ArtworkLoader? = nil) async throws -> EditResult {
        if let problem = changes.problem() { throw LibraryError.invalidValue(field: "changes", value: "\(changes.values)", reason: problem) }
        var newPicture: (data: Data, mime: String)?
        if case .set(let data) = changes.picture {
            // Checked as the artwork loader will read it (format, dimensions within the limits, and
            // a whole decode, small), so no file is given a picture that could never be shown.
            do {
                _ = try ImageCodec.decode(data, maxPixelSize: 32)
            } catch {
                throw LibraryError.invalidValue(field: "picture", value: "\(data.count) bytes", reason: "not a picture Shelf can show: \(error)")
            }
            newPicture = (data, ImageCodec.mimeType(of: data))
        }
        var result = EditResult()
        var written: [(id: TrackID, size: Int64, modified: Date, details: TrackDetails?)] = []
        for (index, id) in ids.enumerated() {
            if Task.isCancelled {
                result.skipped += ids[index...].map { EditResult.Skipped(id: $0, reason: "cancelled") }
                break
            }
            let draft: MetadataDraft
            do {
                draft = try await editableDraft(for: id, loader: loader, pictureSize: 64)
            } catch is CancellationError {
                let reason = Task.isCancelled ? "cancelled" : "the track or its picture changed while it was read"
                result.skipped.append(EditResult.Skipped(id: id, reason: reason))
                continue
            } catch LibraryError.trackNotFound {
                result.skipped.append(EditResult.Skipped(id: id, reason: "no such track"))
                continue
            }
            let stored = try await track(id) ?? draft.track
            let edited = changes.applied(to: stored)
            let properties = changes.fileProperties(of: edited)
            let url = URL(fileURLWithPath: stored.path)
            if let cue = stored.details.cue {
                // A track cut from an image lives in its CUE sheet: what the sheet holds per track
                // is written there, in its own encoding; the rest is refused, saying why.
                do {
                    try Self.writeSheet(cue, of: stored, edited: edited, picture: changes.picture)
                    written.append((id, stored.fileSize, stored.fileModified ?? Date(), nil))
                } catch {
                    result.failed.append(EditResult.Failed(id: id, path: stored.path, error: "\(error)"))
                }
                continue
            }
            do {
                var details: TrackDetails?
                let file = try AtomicRewrite.rewrite(url, cancelled: { Task.isCancelled }) { copy in
                    if !properties.isEmpty { try TagFile.write(copy, properties) }
                    switch changes.picture {
                    case .unchanged: break
                    case .set: try TagFile.writePicture(copy, newPicture!.data, mimeType: newPicture!.mime)
                    case .remove: try TagFile.writePicture(copy, nil)
                    }
                    // The details as an import of the written file reads them (an edited ARTIST
                    // credit splits into the list when the file has no ARTISTS tag).
                    if !properties.isEmpty { details = (try? TagFile.read(copy))?.details().details }
                }
                written.append((id, file.size, file.modified, details))
            } catch is CancellationError {
                result.skipped += ids[index...].map { EditResult.Skipped(id: $0, reason: "cancelled") }
                break
            } catch {
                result.failed.append(EditResult.Failed(id: id, path: stored.path, error: "\(error)"))
            }
        }
        guard !written.isEmpty else { return result }
        let files = written
        let picture = changes.picture
        // The changes are applied again to each track as the transaction sees it, so a play
        // count or an edit that landed while the files were written is kept.
        let (updated, gone): ([TrackID], [TrackID]) = try await write { batch in
            let artworkID: ArtworkID? = if case .set(let data) = picture { try batch.addArtwork(data) } else { nil }
            var updated: [TrackID] = []
            var gone: [TrackID] = []
            for file in files {
                guard try batch.track(file.id) != nil else {
                    gone.append(file.id)
                    continue
                }
                _ = try batch.updateTrack(file.id) { track in
                    track = changes.applied(to: track)
                    if let details = file.details { track.details = details }
                    track.fileSize = file.size
                    track.fileModified = file.modified
                    switch picture {
                    case .unchanged: break
                    case .set: track.artworkID = artworkID
                    case .remove: track.artworkID = nil
                    }
                }
                updated.append(file.id)
            }
            return (updated, gone)
        }
        result.skipped += gone.map { EditResult.Skipped(id: $0, reason: "deleted from the library while its file was written") }
        result.updated = updated
        return result
    }

    /// Writes a cue track's title, performer, songwriter and ISRC into its sheet (atomically, in
    /// the sheet's own encoding); refuses any other change, and a sheet embedded in the image.
    static func writeSheet(_ cue: CueSlice, of stored: Track, edited: Track, picture: PictureChange) throws {
        var others = edited
        others.title = stored.title
        others.artist = stored.artist
        others.composer = stored.composer
        others.details.isrcs = stored.details.isrcs
        others.details.artists = stored.details.artists
        others.details.composers = stored.details.composers
        guard let sheetPath = cue.sheet else {
            throw EditError(
                message: "\(stored.path) is cut from \(stored.filePath) by the CUE sheet embedded in it (its CUESHEET tag), which Shelf does not rewrite")
        }
        guard others == stored, picture == .unchanged else {
            throw EditError(
                message: "\(stored.path) is track \(cue.number) of the CUE sheet \(sheetPath): only its title, artist, composer and ISRC "
                    + "are written (into the sheet); the album's fields and picture are the sheet's and the image's to edit")
        }
        let url = URL(fileURLWithPath: sheetPath)
        guard let original = FileContents.read(sheetPath) else { throw EditError(message: "\(sheetPath): cannot read it") }
        let sheet = try CueSheet.parse(original, name: sheetPath)
        // What the edit leaves alone keeps the sheet's own line (or its absence): a track's
        // artist shown from the album's PERFORMER gets no PERFORMER line of its own.
        let current = sheet.tracks.first { $0.number == cue.number }
        func value(_ new: String?, _ old: String?, _ own: String?) -> String? {
            new == old ? own : (SortKey.isBlank(new) ? nil : new)
        }
        let data = try sheet.rewritten(
            original: original, track: cue.number, title: value(edited.title, stored.title, current?.title),
            performer: value(edited.artist, stored.artist, current?.performer),
            songwriter: value(edited.composer, stored.composer, current?.songwriter),
            isrc: value(edited.details.isrcs.first, stored.details.isrcs.first, current?.isrc))
        _ = try AtomicRewrite.rewrite(url, cancelled: { false }) { copy in try data.write(to: copy) }
    }
}

/// An edit Shelf refuses or cannot carry out, in words naming the track or file.
public struct EditError: ClassifiedError, Equatable {
    /// An edit that cannot be applied as asked.
    public var kind: ErrorKind { .invalid }
    /// "invalidEdit".
    public var errorCode: String { "invalidEdit" }
    public var message: String
    public var description: String { message }
}

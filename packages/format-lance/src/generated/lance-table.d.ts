// Generated from proto/lance-table.proto by protobufjs-cli 2.7.1 (pbts of lance-table.js).
// Do not edit: regenerate with `pnpm --filter @holdfast/format-lance run proto:gen`.
import * as $protobuf from "protobufjs";
import Long = require("long");

/** Namespace holdfast. */
export namespace holdfast {

    /** Namespace lance. */
    namespace lance {

        /**
         * Properties of a Timestamp.
         * @deprecated Use holdfast.lance.Timestamp.$Properties instead.
         */
        interface ITimestamp extends holdfast.lance.Timestamp.$Properties {
        }

        /** Represents a Timestamp. */
        class Timestamp {

            /**
             * Constructs a new Timestamp.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.Timestamp.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Timestamp seconds. */
            seconds: (number|Long);

            /** Timestamp nanos. */
            nanos: number;

            /**
             * Decodes a Timestamp message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.Timestamp & holdfast.lance.Timestamp.$Shape} Timestamp
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.Timestamp & holdfast.lance.Timestamp.$Shape;
        }

        namespace Timestamp {

            /** Properties of a Timestamp. */
            interface $Properties {

                /** Timestamp seconds */
                seconds?: (number|Long|null);

                /** Timestamp nanos */
                nanos?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Timestamp. */
            type $Shape = holdfast.lance.Timestamp.$Properties;
        }

        /**
         * Properties of a Manifest.
         * @deprecated Use holdfast.lance.Manifest.$Properties instead.
         */
        interface IManifest extends holdfast.lance.Manifest.$Properties {
        }

        /** Represents a Manifest. */
        class Manifest {

            /**
             * Constructs a new Manifest.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.Manifest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Manifest fields. */
            fields: holdfast.lance.Field.$Properties[];

            /** Manifest fragments. */
            fragments: holdfast.lance.DataFragment.$Properties[];

            /** Manifest version. */
            version: (number|Long);

            /** Manifest index_section. */
            index_section?: (number|Long|null);

            /** Manifest timestamp. */
            timestamp?: (holdfast.lance.Timestamp.$Properties|null);

            /** Manifest reader_feature_flags. */
            reader_feature_flags: (number|Long);

            /** Manifest writer_feature_flags. */
            writer_feature_flags: (number|Long);

            /** Manifest transaction_file. */
            transaction_file: string;

            /** Manifest config. */
            config: { [k: string]: string };

            /** Manifest base_paths. */
            base_paths: holdfast.lance.BasePath.$Properties[];

            /** Manifest branch. */
            branch?: (string|null);

            /** Manifest transaction_section. */
            transaction_section?: (number|Long|null);

            /**
             * Decodes a Manifest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.Manifest & holdfast.lance.Manifest.$Shape} Manifest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.Manifest & holdfast.lance.Manifest.$Shape;
        }

        namespace Manifest {

            /** Properties of a Manifest. */
            interface $Properties {

                /** Manifest fields */
                fields?: (holdfast.lance.Field.$Properties[]|null);

                /** Manifest fragments */
                fragments?: (holdfast.lance.DataFragment.$Properties[]|null);

                /** Manifest version */
                version?: (number|Long|null);

                /** Manifest index_section */
                index_section?: (number|Long|null);

                /** Manifest timestamp */
                timestamp?: (holdfast.lance.Timestamp.$Properties|null);

                /** Manifest reader_feature_flags */
                reader_feature_flags?: (number|Long|null);

                /** Manifest writer_feature_flags */
                writer_feature_flags?: (number|Long|null);

                /** Manifest transaction_file */
                transaction_file?: (string|null);

                /** Manifest config */
                config?: ({ [k: string]: string }|null);

                /** Manifest base_paths */
                base_paths?: (holdfast.lance.BasePath.$Properties[]|null);

                /** Manifest branch */
                branch?: (string|null);

                /** Manifest transaction_section */
                transaction_section?: (number|Long|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Manifest. */
            type $Shape = holdfast.lance.Manifest.$Properties;
        }

        /**
         * Properties of a Field.
         * @deprecated Use holdfast.lance.Field.$Properties instead.
         */
        interface IField extends holdfast.lance.Field.$Properties {
        }

        /** Represents a Field. */
        class Field {

            /**
             * Constructs a new Field.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.Field.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Field name. */
            name: string;

            /** Field logical_type. */
            logical_type: string;

            /** Field extension_name. */
            extension_name: string;

            /** Field metadata. */
            metadata: { [k: string]: Uint8Array };

            /**
             * Decodes a Field message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.Field & holdfast.lance.Field.$Shape} Field
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.Field & holdfast.lance.Field.$Shape;
        }

        namespace Field {

            /** Properties of a Field. */
            interface $Properties {

                /** Field name */
                name?: (string|null);

                /** Field logical_type */
                logical_type?: (string|null);

                /** Field extension_name */
                extension_name?: (string|null);

                /** Field metadata */
                metadata?: ({ [k: string]: Uint8Array }|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Field. */
            type $Shape = holdfast.lance.Field.$Properties;
        }

        /**
         * Properties of a BasePath.
         * @deprecated Use holdfast.lance.BasePath.$Properties instead.
         */
        interface IBasePath extends holdfast.lance.BasePath.$Properties {
        }

        /** Represents a BasePath. */
        class BasePath {

            /**
             * Constructs a new BasePath.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.BasePath.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** BasePath id. */
            id: number;

            /** BasePath name. */
            name?: (string|null);

            /** BasePath is_dataset_root. */
            is_dataset_root: boolean;

            /** BasePath path. */
            path: string;

            /**
             * Decodes a BasePath message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.BasePath & holdfast.lance.BasePath.$Shape} BasePath
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.BasePath & holdfast.lance.BasePath.$Shape;
        }

        namespace BasePath {

            /** Properties of a BasePath. */
            interface $Properties {

                /** BasePath id */
                id?: (number|null);

                /** BasePath name */
                name?: (string|null);

                /** BasePath is_dataset_root */
                is_dataset_root?: (boolean|null);

                /** BasePath path */
                path?: (string|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a BasePath. */
            type $Shape = holdfast.lance.BasePath.$Properties;
        }

        /**
         * Properties of a DataFragment.
         * @deprecated Use holdfast.lance.DataFragment.$Properties instead.
         */
        interface IDataFragment extends holdfast.lance.DataFragment.$Properties {
        }

        /** Represents a DataFragment. */
        class DataFragment {

            /**
             * Constructs a new DataFragment.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.DataFragment.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** DataFragment id. */
            id: (number|Long);

            /** DataFragment files. */
            files: holdfast.lance.DataFile.$Properties[];

            /** DataFragment deletion_file. */
            deletion_file?: (holdfast.lance.DeletionFile.$Properties|null);

            /** DataFragment external_row_ids. */
            external_row_ids?: (holdfast.lance.ExternalFile.$Properties|null);

            /** DataFragment external_last_updated_at_versions. */
            external_last_updated_at_versions?: (holdfast.lance.ExternalFile.$Properties|null);

            /** DataFragment external_created_at_versions. */
            external_created_at_versions?: (holdfast.lance.ExternalFile.$Properties|null);

            /** DataFragment overlays. */
            overlays: holdfast.lance.DataOverlayFile.$Properties[];

            /**
             * Decodes a DataFragment message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.DataFragment & holdfast.lance.DataFragment.$Shape} DataFragment
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.DataFragment & holdfast.lance.DataFragment.$Shape;
        }

        namespace DataFragment {

            /** Properties of a DataFragment. */
            interface $Properties {

                /** DataFragment id */
                id?: (number|Long|null);

                /** DataFragment files */
                files?: (holdfast.lance.DataFile.$Properties[]|null);

                /** DataFragment deletion_file */
                deletion_file?: (holdfast.lance.DeletionFile.$Properties|null);

                /** DataFragment external_row_ids */
                external_row_ids?: (holdfast.lance.ExternalFile.$Properties|null);

                /** DataFragment external_last_updated_at_versions */
                external_last_updated_at_versions?: (holdfast.lance.ExternalFile.$Properties|null);

                /** DataFragment external_created_at_versions */
                external_created_at_versions?: (holdfast.lance.ExternalFile.$Properties|null);

                /** DataFragment overlays */
                overlays?: (holdfast.lance.DataOverlayFile.$Properties[]|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DataFragment. */
            type $Shape = holdfast.lance.DataFragment.$Properties;
        }

        /**
         * Properties of a DataOverlayFile.
         * @deprecated Use holdfast.lance.DataOverlayFile.$Properties instead.
         */
        interface IDataOverlayFile extends holdfast.lance.DataOverlayFile.$Properties {
        }

        /** Represents a DataOverlayFile. */
        class DataOverlayFile {

            /**
             * Constructs a new DataOverlayFile.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.DataOverlayFile.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** DataOverlayFile data_file. */
            data_file?: (holdfast.lance.DataFile.$Properties|null);

            /**
             * Decodes a DataOverlayFile message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.DataOverlayFile & holdfast.lance.DataOverlayFile.$Shape} DataOverlayFile
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.DataOverlayFile & holdfast.lance.DataOverlayFile.$Shape;
        }

        namespace DataOverlayFile {

            /** Properties of a DataOverlayFile. */
            interface $Properties {

                /** DataOverlayFile data_file */
                data_file?: (holdfast.lance.DataFile.$Properties|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DataOverlayFile. */
            type $Shape = holdfast.lance.DataOverlayFile.$Properties;
        }

        /**
         * Properties of a DataFile.
         * @deprecated Use holdfast.lance.DataFile.$Properties instead.
         */
        interface IDataFile extends holdfast.lance.DataFile.$Properties {
        }

        /** Represents a DataFile. */
        class DataFile {

            /**
             * Constructs a new DataFile.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.DataFile.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** DataFile path. */
            path: string;

            /** DataFile file_size_bytes. */
            file_size_bytes: (number|Long);

            /** DataFile base_id. */
            base_id?: (number|null);

            /**
             * Decodes a DataFile message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.DataFile & holdfast.lance.DataFile.$Shape} DataFile
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.DataFile & holdfast.lance.DataFile.$Shape;
        }

        namespace DataFile {

            /** Properties of a DataFile. */
            interface $Properties {

                /** DataFile path */
                path?: (string|null);

                /** DataFile file_size_bytes */
                file_size_bytes?: (number|Long|null);

                /** DataFile base_id */
                base_id?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DataFile. */
            type $Shape = holdfast.lance.DataFile.$Properties;
        }

        /**
         * Properties of a DeletionFile.
         * @deprecated Use holdfast.lance.DeletionFile.$Properties instead.
         */
        interface IDeletionFile extends holdfast.lance.DeletionFile.$Properties {
        }

        /** Represents a DeletionFile. */
        class DeletionFile {

            /**
             * Constructs a new DeletionFile.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.DeletionFile.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** DeletionFile file_type. */
            file_type: number;

            /** DeletionFile read_version. */
            read_version: (number|Long);

            /** DeletionFile id. */
            id: (number|Long);

            /** DeletionFile base_id. */
            base_id?: (number|null);

            /**
             * Decodes a DeletionFile message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.DeletionFile & holdfast.lance.DeletionFile.$Shape} DeletionFile
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.DeletionFile & holdfast.lance.DeletionFile.$Shape;
        }

        namespace DeletionFile {

            /** Properties of a DeletionFile. */
            interface $Properties {

                /** DeletionFile file_type */
                file_type?: (number|null);

                /** DeletionFile read_version */
                read_version?: (number|Long|null);

                /** DeletionFile id */
                id?: (number|Long|null);

                /** DeletionFile base_id */
                base_id?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DeletionFile. */
            type $Shape = holdfast.lance.DeletionFile.$Properties;
        }

        /**
         * Properties of an ExternalFile.
         * @deprecated Use holdfast.lance.ExternalFile.$Properties instead.
         */
        interface IExternalFile extends holdfast.lance.ExternalFile.$Properties {
        }

        /** Represents an ExternalFile. */
        class ExternalFile {

            /**
             * Constructs a new ExternalFile.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.ExternalFile.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** ExternalFile path. */
            path: string;

            /** ExternalFile offset. */
            offset: (number|Long);

            /** ExternalFile size. */
            size: (number|Long);

            /**
             * Decodes an ExternalFile message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.ExternalFile & holdfast.lance.ExternalFile.$Shape} ExternalFile
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.ExternalFile & holdfast.lance.ExternalFile.$Shape;
        }

        namespace ExternalFile {

            /** Properties of an ExternalFile. */
            interface $Properties {

                /** ExternalFile path */
                path?: (string|null);

                /** ExternalFile offset */
                offset?: (number|Long|null);

                /** ExternalFile size */
                size?: (number|Long|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of an ExternalFile. */
            type $Shape = holdfast.lance.ExternalFile.$Properties;
        }

        /**
         * Properties of a UUID.
         * @deprecated Use holdfast.lance.UUID.$Properties instead.
         */
        interface IUUID extends holdfast.lance.UUID.$Properties {
        }

        /** Represents a UUID. */
        class UUID {

            /**
             * Constructs a new UUID.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.UUID.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** UUID uuid. */
            uuid: Uint8Array;

            /**
             * Decodes a UUID message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.UUID & holdfast.lance.UUID.$Shape} UUID
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.UUID & holdfast.lance.UUID.$Shape;
        }

        namespace UUID {

            /** Properties of a UUID. */
            interface $Properties {

                /** UUID uuid */
                uuid?: (Uint8Array|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a UUID. */
            type $Shape = holdfast.lance.UUID.$Properties;
        }

        /**
         * Properties of an IndexMetadata.
         * @deprecated Use holdfast.lance.IndexMetadata.$Properties instead.
         */
        interface IIndexMetadata extends holdfast.lance.IndexMetadata.$Properties {
        }

        /** Represents an IndexMetadata. */
        class IndexMetadata {

            /**
             * Constructs a new IndexMetadata.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.IndexMetadata.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** IndexMetadata uuid. */
            uuid?: (holdfast.lance.UUID.$Properties|null);

            /** IndexMetadata name. */
            name: string;

            /** IndexMetadata dataset_version. */
            dataset_version: (number|Long);

            /** IndexMetadata base_id. */
            base_id?: (number|null);

            /**
             * Decodes an IndexMetadata message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.IndexMetadata & holdfast.lance.IndexMetadata.$Shape} IndexMetadata
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.IndexMetadata & holdfast.lance.IndexMetadata.$Shape;
        }

        namespace IndexMetadata {

            /** Properties of an IndexMetadata. */
            interface $Properties {

                /** IndexMetadata uuid */
                uuid?: (holdfast.lance.UUID.$Properties|null);

                /** IndexMetadata name */
                name?: (string|null);

                /** IndexMetadata dataset_version */
                dataset_version?: (number|Long|null);

                /** IndexMetadata base_id */
                base_id?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of an IndexMetadata. */
            type $Shape = holdfast.lance.IndexMetadata.$Properties;
        }

        /**
         * Properties of an IndexSection.
         * @deprecated Use holdfast.lance.IndexSection.$Properties instead.
         */
        interface IIndexSection extends holdfast.lance.IndexSection.$Properties {
        }

        /** Represents an IndexSection. */
        class IndexSection {

            /**
             * Constructs a new IndexSection.
             * @param [properties] Properties to set
             */
            constructor(properties?: holdfast.lance.IndexSection.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** IndexSection indices. */
            indices: holdfast.lance.IndexMetadata.$Properties[];

            /**
             * Decodes an IndexSection message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {holdfast.lance.IndexSection & holdfast.lance.IndexSection.$Shape} IndexSection
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): holdfast.lance.IndexSection & holdfast.lance.IndexSection.$Shape;
        }

        namespace IndexSection {

            /** Properties of an IndexSection. */
            interface $Properties {

                /** IndexSection indices */
                indices?: (holdfast.lance.IndexMetadata.$Properties[]|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of an IndexSection. */
            type $Shape = holdfast.lance.IndexSection.$Properties;
        }
    }
}

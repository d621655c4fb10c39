// Every route module of the hosted service, one per resource.
import type { RouteModule } from '../app.js';
import auth from './auth.js';
import teams from './teams.js';
import apiKeys from './apiKeys.js';
import system from './system.js';
import packages from './packages.js';
import packageList from './packageList.js';
import bulkArchive from './bulkArchive.js';
import tags from './tags.js';
import uploads from './uploads.js';
import links from './links.js';
import downloads from './downloads.js';
import pages from './pages.js';
import portalPage from './portalPage.js';
import portals from './portals.js';
import updates from './updates.js';
import customWebhooks from './customWebhooks.js';
import filters from './filters.js';
import cloudConnections from './cloudConnections.js';
import cloudTransfers from './cloudTransfers.js';
import portalPackageList from './portalPackageList.js';
import storageGateway from './storageGateway.js';
import teamspaces from './teamspaces.js';
import forms from './forms.js';
import events from './events.js';
import health from './health.js';

export const routeModules: RouteModule[] = [auth, teams, apiKeys, system, packages, packageList, bulkArchive, tags, uploads, links, downloads, pages, portalPage, portals, portalPackageList, customWebhooks, filters, cloudConnections, cloudTransfers, storageGateway, updates, teamspaces, forms, events, health];

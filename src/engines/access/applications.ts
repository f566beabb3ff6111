import type { AttendanceState } from '../../domain/attendance-states.js';
import { organiserSeesNames } from '../../domain/participant-list-access.js';
import type { Viewer } from '../../platform/auth/viewer.js';

// What of one application a viewer sees (spec 5.5): the names on it. Whether the application may be read at
// all is whether its offer's participant list may be (lists.ts assertListReadable).

/** Admins and the system see every name; organisers those of told decisions (D10); anyone else none. */
export function seesApplicantNames(viewer: Viewer, application: { status: AttendanceState; heldBack: boolean }): boolean {
  switch (viewer.kind) {
    case 'admin':
    case 'system':
      return true;
    case 'organiser':
      return organiserSeesNames(application);
    default:
      return false;
  }
}

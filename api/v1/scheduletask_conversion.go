// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

// Hub marks v1 as the version every other version of ScheduleTask converts
// through.
func (*ScheduleTask) Hub() {}

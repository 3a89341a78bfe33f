/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package core is what every kubectl plugin of this project shares, so that
// `kubectl stask` and the plugins that follow it connect, print, wait and
// fail in one way, the way kubectl does:
//
//   - Options: kubectl's connection flags (genericclioptions.ConfigFlags),
//     the streams, a clock, and a controller-runtime client built with the
//     plugin's scheme.
//   - PrintFlags: -o json|yaml|name|jsonpath|go-template|custom-columns|wide
//     through cli-runtime's printers, and PrintTable for the human tables
//     (metav1.Table through cli-runtime's table printer).
//   - Relative, UseColor, Colorize: ages through duration.HumanDuration,
//     colour only where a person reads it.
//   - WaitFor and Progress: waiting on one object through a watch.
//   - Explainer and ExitError: errors that say what to do, and exit codes.
//   - EventsAbout and WriteEvents: the events of one object.
//
// A plugin's own package holds only its kinds' commands and columns.
package core
